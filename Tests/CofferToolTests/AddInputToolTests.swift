import Foundation
import TestSupport
import Testing

/// Issue 23, point 2: what people paste or type into `coffer add`, and errors that say which
/// command takes it or which line failed.
@Suite("coffer add: bare secrets, exports and typed secrets")
struct AddInputToolTests {
    static func run(_ script: String, scratch: TemporaryDirectory) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", "set -u\n" + script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
    }

    @Test("add - names the command for a bare secret and for a Google export, and the line that failed of several")
    func pastedLines() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo '--- bare'; echo 'JBSW Y3DP EHPK 3PXP' | "$COFFER" add - 2>&1; echo "status=$?"
            echo '--- export'; echo 'otpauth-migration://offline?data=CjEKCkhlbGxvId6tvu8SGEV4YW1wbGU' | "$COFFER" add - 2>&1; echo "status=$?"
            echo '--- lines'
            printf 'otpauth://totp/A:one?secret=JBSWY3DPEHPK3PXP\\n\\nnot a uri\\nJBSWY3DPEHPK3PXPJBSW\\notpauth://totp/A:two?secret=JBSWY3DPEHPK3PXP\\n' | "$COFFER" add - 2>&1
            echo "status=$?"
            "$COFFER" list | grep -c 'A: '
            """, scratch: scratch)
        let out = result.stdout
        func part(_ name: String) -> String {
            out.components(separatedBy: "--- \(name)\n").dropFirst().first?.components(separatedBy: "--- ")[0] ?? ""
        }
        #expect(part("bare").contains("looks like a bare secret, not a URI; add it with: coffer add --issuer ISSUER --account NAME --secret -"),
                "\(out)")
        #expect(part("bare").contains("status=1") && !part("bare").contains("JBSW"), "the secret is not repeated: \(out)")
        #expect(part("export").contains("Google Authenticator export") && part("export").contains("coffer import -"), "\(out)")
        let lines = part("lines")
        #expect(lines.contains("coffer: line 3: The URI is malformed"), "line numbers count the blank line: \(lines)")
        #expect(lines.contains("coffer: line 4: that looks like a bare secret"), "\(lines)")
        #expect(lines.contains("Added A: one") && lines.contains("Added A: two") && lines.contains("2 of 4 URIs were not added"), "\(lines)")
        #expect(lines.contains("status=1") && out.hasSuffix("2\n"), "the good lines were added: \(out)")
    }

    @Test("a typed secret that is not base32 is spoken of as a secret, and asked again at a terminal")
    func typedSecret() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        // A pseudo-terminal; each answer is typed once its prompt is on the terminal.
        let result = try await PseudoTerminal.run("""
            "$COFFER" add --issuer X --account given --secret 'not!base32' 2>&1; echo "given=$?"
            "$COFFER" add --issuer X --account typed; echo "typed=$?"
            "$COFFER" list | grep 'X: '
            """, typing: [.init(after: "Secret (base32): ", type: "wrong!one\n"), .init(after: "Secret (base32): ", type: "JBSWY3DPEHPK3PXP\n")],
            environment: ["COFFER": try CofferProcess.executable.path, "COFFER_HOME": scratch.appending("home").path],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
        let out = result.stdout
        #expect(out.contains("coffer: the secret is not base32: character 4 is not a letter A–Z or a digit 2–7; the secret is the text shown"),
                "\(out)")
        #expect(!out.contains("URI's 'secret' parameter") && out.contains("given=1"), "\(out)")
        #expect(out.components(separatedBy: "Secret (base32): ").count == 3, "asked twice: \(out)")
        #expect(out.contains("try again") && out.contains("Added X: typed") && out.contains("typed=0"), "\(out)")
        #expect(!out.contains("wrong!one") && !out.contains("JBSWY3DPEHPK3PXP"), "nothing typed is echoed: \(out)")
    }
}
