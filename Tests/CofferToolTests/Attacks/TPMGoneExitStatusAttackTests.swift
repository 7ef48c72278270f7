import Foundation
import TestSupport
import Testing

/// Issue 30, point 3 (the fourth attack review): with the TPM frozen or gone, `add` and
/// `remove` exited 69 (unavailable) as the table says, but `code` exited 1 and `verify` said the
/// account "has no mechanism that makes codes". One classification for every command; a record
/// that could not be read is never reported as absent.
@Suite("R13: the TPM not answering, every command's exit status", .enabled(if: SoftwareTPM.isAvailable))
struct TPMGoneExitStatusAttackTests {
    static func run(_ script: String, tpm: SoftwareTPM, scratch: TemporaryDirectory) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", "set -u\n" + script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path, "COFFER_TPM_TCTI": tpm.tcti],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "COFFER_TPM_PIN_FILE"], deadline: .seconds(240))
    }

    /// Every command that needs the key, each printing `name=status` and its first line; all at
    /// once (each waits out the TPM's deadline).
    static let commands = """
        try() { name=$1; shift; ( out=$("$@" 2>&1); echo "$name=$? $(echo "$out" | head -1)" > "$SCRATCH/said.$name" ) & }
        try code "$COFFER" code
        try code-one "$COFFER" code bank --raw
        try code-totp "$COFFER" code mail --raw
        try verify "$COFFER" verify 123456 bank
        try show "$COFFER" show mail --uri
        try add sh -c 'echo "otpauth://totp/New:x?secret=JBSWY3DPEHPK3PXP&issuer=New" | "$COFFER" add -'
        try remove "$COFFER" remove mail --yes
        try rename "$COFFER" rename mail --issuer Post
        try export "$COFFER" export "$SCRATCH/out.json"
        try restore "$COFFER" restore "$(cat "$SCRATCH/id")"
        try trash "$COFFER" trash
        try list "$COFFER" list
        wait; cat "$SCRATCH"/said.*
        """

    @Test("frozen (SIGSTOP) and gone (killed): every command that needs the key exits 69 with the TPM's words; list names the accounts")
    func tpmNotAnswering() async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.thaw(); tpm.remove() }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let prepared = try await Self.run("""
            echo '\(TrashToolTests.hotp)' | "$COFFER" add - > /dev/null 2>&1 || exit 10
            echo 'otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail' | "$COFFER" add - > /dev/null 2>&1 || exit 11
            echo 'otpauth://totp/Old:x?secret=JBSWY3DPEHPK3PXP&issuer=Old' | "$COFFER" add - > /dev/null 2>&1 || exit 12
            "$COFFER" remove old --yes > /dev/null || exit 13
            "$COFFER" trash --json | grep '"id"' | head -1 | cut -d'"' -f4 > "$SCRATCH/id"
            "$COFFER" key move --to tpm > /dev/null || exit 14
            """, tpm: tpm, scratch: scratch)
        #expect(prepared.status == 0, "\(prepared.stdout) \(prepared.stderr)")
        let list = try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/ls"), ["-R", scratch.appending("home").path])
        for (state, act) in [("frozen", { tpm.freeze() }), ("gone", { tpm.thaw(); tpm.kill() })] as [(String, () -> Void)] {
            act()
            let result = try await Self.run(Self.commands, tpm: tpm, scratch: scratch)
            let lines = Dictionary(result.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
                guard let equals = line.firstIndex(of: "=") else { return nil }
                return (String(line[..<equals]), String(line[line.index(after: equals)...]))
            }) { $1 }
            for name in ["code", "code-one", "code-totp", "verify", "show", "add", "remove", "rename", "export", "restore", "trash"] {
                let line = lines[name] ?? "missing"
                #expect(line.hasPrefix("69 "), "\(state): \(name) exits 69 (unavailable): \(line)")
                #expect(!line.contains("no mechanism") && !line.contains("no account") && !line.contains("nothing in the trash"),
                        "\(state): \(name) never takes an unreadable record for an absent one: \(line)")
            }
            #expect(lines["list"]?.hasPrefix("0 ") == true, "\(state): list names the accounts without the key: \(lines["list"] ?? "")")
            ReliabilityReport.record("R13", "every command with the TPM \(state)", tried: "12 commands",
                                     outcome: lines.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.prefix(2))" }.joined(separator: ", "))
        }
        _ = list
    }
}
