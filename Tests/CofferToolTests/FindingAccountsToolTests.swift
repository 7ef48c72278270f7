import Foundation
import TestSupport
import Testing

/// Issue 33, points 4 and 6: the account meant, the words people type, and what a terminal gets
/// that a pipe does not.
@Suite("coffer finds the account meant and speaks to terminals and pipes apart")
struct FindingAccountsToolTests {
    static let environment = ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"]

    static func run(_ script: String, scratch: TemporaryDirectory, typing steps: [PseudoTerminal.Step]? = nil) async throws -> CofferProcess.Result {
        let setup = """
            set -u
            for uri in 'otpauth://totp/Google:me?secret=MFRGGZDFMZTWQ2LK&issuer=Google' \\
                       'otpauth://totp/Google%20Cloud:me?secret=MZXW6YTBOI======&issuer=Google%20Cloud' \\
                       'otpauth://totp/Bank:bob?secret=JBSWY3DPEHPK3PXP&issuer=Bank'; do
              echo "$uri" | "$COFFER" add - > /dev/null 2>&1 || exit 10
            done

            """
        let environment = ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                           "COFFER_HOME": scratch.appending("home").path]
        if let steps {
            return try await PseudoTerminal.run(setup + script, typing: steps, environment: environment, removing: Self.environment)
        }
        return try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/bash"), ["-c", setup + script],
                                           environment: environment, removing: Self.environment)
    }

    static func part(_ out: String, _ name: String) -> String {
        out.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "--- \(name)\n").dropFirst().first?
            .components(separatedBy: "--- ")[0] ?? ""
    }

    @Test("at a terminal an ambiguous query offers a numbered choice; no choice is exit 3, and so is a script's",
          .enabled(if: PseudoTerminal.isAvailable, "needs script(1)"))
    func numberedChoice() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo '--- chosen'; "$COFFER" code goo --raw --at @1000000000; echo "status=$?"
            echo '--- cloud'; "$COFFER" code 'Google Cloud: me' --raw --at @1000000000
            echo '--- none'; "$COFFER" code goo --raw; echo "status=$?"
            echo '--- script'; "$COFFER" code goo --raw < /dev/null 2>&1 | cat; echo "status=${PIPESTATUS[0]}"
            """, scratch: scratch, typing: [.init(after: "Which one? [1-2, Enter for none] ", type: "2\n"),
                                            .init(after: "Which one? [1-2, Enter for none] ", type: "\n")])
        let out = result.stdout
        let chosen = Self.part(out, "chosen")
        #expect(chosen.contains("'goo' matches 2 accounts:\n  1  Google: me  TOTP") && chosen.contains("  2  Google Cloud: me  TOTP"), "\(out)")
        let code = Self.part(out, "cloud").trimmingCharacters(in: .whitespacesAndNewlines)
        // One instant for both codes: a 30-second step between the two commands made them differ.
        #expect(code.count == 6 && chosen.contains("\(code)\nstatus=0"), "the second was chosen: \(out)")
        #expect(Self.part(out, "none").contains("no account was chosen") && Self.part(out, "none").contains("status=3"), "\(out)")
        #expect(Self.part(out, "script").contains("status=3") && !Self.part(out, "script").contains("Which one"), "\(out)")
    }

    @Test("list has its header only at a terminal; export - asks at a terminal before printing secrets, never into a pipe",
          .enabled(if: PseudoTerminal.isAvailable, "needs script(1)"))
    func terminalsAndPipes() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo '--- list'; "$COFFER" list
            echo '--- piped'; "$COFFER" list | cat
            echo '--- declined'; "$COFFER" export - --format uris; echo "status=$?"
            echo '--- accepted'; "$COFFER" export - --format uris; echo "status=$?"
            echo '--- pipe'; "$COFFER" export - --format uris 2>/dev/null | grep -c otpauth
            echo '--- yes'; "$COFFER" export - --format uris --yes 2>/dev/null | grep -c otpauth
            """, scratch: scratch, typing: [.init(after: "Print them? [y/N] ", type: "n\n"), .init(after: "Print them? [y/N] ", type: "y\n")])
        let out = result.stdout
        #expect(Self.part(out, "list").hasPrefix("Accounts in "), "\(out)")
        #expect(Self.part(out, "piped") == "Bank: bob  TOTP\nGoogle: me  TOTP\nGoogle Cloud: me  TOTP\n", "\(out)")
        let declined = Self.part(out, "declined")
        #expect(declined.contains("This prints the secrets of 3 account(s)") && declined.contains("nothing was shown")
                && !declined.contains("otpauth://") && declined.contains("status=1"), "\(out)")
        #expect(Self.part(out, "accepted").components(separatedBy: "otpauth://totp/").count == 4, "\(out)")
        #expect(Self.part(out, "pipe").hasPrefix("3"), "\(out)")
        #expect(Self.part(out, "yes").hasPrefix("3"), "\(out)")
    }

    @Test("restore by the account's name; add with --issuer alone; pass's words; short options; --at as people type it")
    func wordsPeopleType() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo '--- restore'; "$COFFER" rm bank -f > /dev/null; "$COFFER" restore bank; echo "status=$?"
            echo '--- twice'; "$COFFER" rm bank -f > /dev/null; echo 'otpauth://totp/Bank:bob?secret=JBSWY3DPEHPK3PXP&issuer=Bank' | "$COFFER" add - > /dev/null
            "$COFFER" rm bank -f > /dev/null; "$COFFER" restore bank 2>&1; echo "status=$?"
            echo '--- issuer'; echo 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' | "$COFFER" add --issuer Foo --secret -; echo "status=$?"
            echo '--- ls'; "$COFFER" ls | grep -c ': '
            echo '--- mv'; "$COFFER" mv foo --account work > /dev/null; "$COFFER" otp 'Foo: work' -r > /dev/null; echo "status=$?"
            echo '--- insert'; "$COFFER" insert 2>&1; echo "status=$?"
            echo '--- at'
            "$COFFER" code google -r --at @1795512600
            "$COFFER" code google -r --at '2026-11-24 09:30 UTC'
            "$COFFER" code google -r --at '2026-11-24T09:30:00+00:00'
            TZ=Asia/Tokyo "$COFFER" code google -r --at '2026-11-24 18:30'
            "$COFFER" code google -r --at '2026-11-24 10:30 +01:00'
            echo '--- now'; [ "$("$COFFER" code google -r --at now)" = "$("$COFFER" code google -r)" ] || [ "$("$COFFER" code google -r --at now)" = "$("$COFFER" code google -r)" ]; echo "same=$?"
            echo '--- bad'; "$COFFER" code google --at 'next tuesday' 2>&1 | head -1; echo "status=${PIPESTATUS[0]}"
            """, scratch: scratch)
        let out = result.stdout
        #expect(Self.part(out, "restore").contains("Restored Bank: bob") && Self.part(out, "restore").contains("status=0"), "\(out)")
        let twice = Self.part(out, "twice")
        #expect(twice.contains("'bank' names 2 trash entries") && twice.contains("restore one by its id") && twice.contains("status=3"), "\(out)")
        #expect(Self.part(out, "issuer").contains("Added Foo: Foo (TOTP)") && Self.part(out, "issuer").contains("status=0"), "\(out)")
        #expect(Self.part(out, "ls").hasPrefix("3"), "ls is list: \(out)")
        #expect(Self.part(out, "mv").hasPrefix("status=0"), "mv is rename, otp is code, -r is --raw: \(out)")
        #expect(Self.part(out, "insert").contains("Did you mean 'add'?") && Self.part(out, "insert").contains("status=64"), "\(out)")
        let at = Self.part(out, "at").split(separator: "\n")
        #expect(at.count == 5 && Set(at).count == 1 && at[0].count == 6, "every form names 2026-11-24 09:30 UTC: \(out) \(result.stderr)")
        #expect(Self.part(out, "now").contains("same=0"), "\(out)")
        #expect(Self.part(out, "bad").contains("status=64"), "\(out)")
    }
}
