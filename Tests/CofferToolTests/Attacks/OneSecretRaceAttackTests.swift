import Foundation
import TestSupport
import Testing

/// The rule that two accounts never hold one HOTP secret, across processes: four `coffer add`s
/// of one secret under four names, started at once in four shells; exactly one may win. Before
/// SQLite's adds were serialized (`SerializedAdds`), two won in one round of eight.
@Suite("One HOTP secret, four processes adding it under four names at once")
struct OneSecretRaceAttackTests {
    @Test("exactly one add succeeds in every round; the others are refused, naming the holder")
    func fourAddsAtOnce() async throws {
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        for round in 0..<12 {
            let scratch = TemporaryDirectory()
            defer { scratch.remove() }
            let result = try await CofferProcess.run(
                executable: URL(fileURLWithPath: "/bin/bash"), ["-c", """
                    set -u
                    echo 'otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail' | "$COFFER" add - > /dev/null || exit 10
                    for name in ada ben cy dee; do
                      ( echo "otpauth://hotp/Bank:$name?secret=\(secret)&issuer=Bank" | "$COFFER" add - > /dev/null 2> "$SCRATCH/$name.err"
                        echo "$name=$?" ) &
                    done
                    wait
                    "$COFFER" list | grep -c 'Bank: ' || true
                    """],
                environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                              "COFFER_HOME": scratch.appending("home").path],
                removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
            let lines = result.stdout.split(separator: "\n")
            let won = lines.filter { $0.hasSuffix("=0") }.count
            #expect(won == 1, "round \(round): \(result.stdout) \(result.stderr)")
            #expect(lines.last == "1", "round \(round): one Bank account is listed: \(result.stdout)")
        }
    }
}
