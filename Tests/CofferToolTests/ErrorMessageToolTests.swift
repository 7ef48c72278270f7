import Foundation
import TestSupport
import Testing

/// Issue 23, point 2: errors say what to do first, in one line, without record paths or ids,
/// and never advise deleting data; each cause of a refused file has its own message.
@Suite("coffer's errors lead with the fix")
struct ErrorMessageToolTests {
    /// Runs `script` in bash with `$COFFER` and a data directory of its own; without a keyring
    /// session unless `keyring`.
    static func run(_ script: String, scratch: TemporaryDirectory, keyring: Bool = false) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", "set -u\n" + script],
            environment: ["COFFER": try CofferProcess.executable.path, "COFFER_HOME": scratch.appending("home").path],
            removing: keyring ? ["COFFER_BACKEND"] : ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
    }

    /// Found by an attack review: the sealed secret of one row copied into another gave a line
    /// with both records' internal paths (ids and columns).
    @Test("a secret copied between records is said without record paths or ids")
    func swappedRecord() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
                printf '%s\\n' 'otpauth://totp/A:a?secret=JBSWY3DPEHPK3PXP&issuer=A' 'otpauth://totp/B:b?secret=GEZDGNBVGY3TQOJQ&issuer=B' \\
                  | "$COFFER" add - > /dev/null 2>&1 || exit 10
                sqlite3 "$COFFER_HOME/authenticator.sqlite" "UPDATE mechanism SET secret = (SELECT secret FROM mechanism WHERE issuer = 'A') WHERE issuer = 'B'"
                "$COFFER" list 2>&1; echo "status=$?"; "$COFFER" code b 2>&1; echo "status=$?"
                """, scratch: scratch)
        let out = result.stdout
        #expect(out.components(separatedBy: "1 stored record(s) cannot be read: they were copied or swapped between records outside Coffer").count == 3, "\(out)")
        #expect(!out.contains("mechanism/") && out.range(of: #"[0-9A-F]{8}-[0-9A-F]{4}-"#, options: .regularExpression) == nil, "no record paths or ids: \(out)")
        #expect(out.contains("status=1\n"), "\(out)")
    }

    /// What `code` saw between a replacement's removal and its insertion, or after a replacement
    /// killed there: the account without a mechanism. Said as that, not as "nothing matches".
    @Test("an account left without a mechanism is said so by code, with what to do")
    func accountWithoutMechanism() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo 'otpauth://hotp/Bank:bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank' | "$COFFER" add - > /dev/null 2>&1 || exit 10
            sqlite3 "$COFFER_HOME/authenticator.sqlite" 'DELETE FROM mechanism'
            "$COFFER" code bank 2>&1; echo "status=$?"
            """, scratch: scratch)
        #expect(result.stdout == "coffer: run coffer code again: Bank: bob has no mechanism just now, as another command replaces it; "
                + "if that stays so, one was stopped halfway: coffer trash, or add it again\nstatus=2\n", "\(result.stdout)")
    }

    /// Accounts made in a session with a keyring (their key goes into it), then used where there
    /// is none (over SSH): the daily case of a keyring out of reach.
    @Test("a keyring out of reach: one line that leads with what to do and names coffer's own commands; list shows names and types",
          .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
    func keyringOutOfReach() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
                printf '%s\n' 'otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail' \
                  'otpauth://hotp/Bank:bob?secret=JBSWY3DPEHPK3PXP&issuer=Bank&counter=7' | "$COFFER" add - > /dev/null || exit 10
                cat "$COFFER_HOME/authenticator.keystore"
                ls "$COFFER_HOME/keys" 2> /dev/null | grep -c key
                away() { env -u DBUS_SESSION_BUS_ADDRESS "$COFFER" "$@"; }
                echo '--- list'; away list 2>&1; echo "status=$?"
                echo '--- json'; away list --json 2> /dev/null | grep -c '"unverified" : true'
                echo '--- code'; away code mail 2>&1; echo "status=$?"
                echo '--- secret'; away list --show-secret 2>&1; echo "status=$?"
                echo '--- back'; "$COFFER" code bank --raw > /dev/null; echo "status=$?"
                """, scratch: scratch, keyring: true)
        let out = result.stdout
        #expect(out.hasPrefix("secret-service\n0\n"), "the key went into the keyring, no key file: \(out)")
        let section = { (name: String) in out.components(separatedBy: "--- \(name)\n").last?.components(separatedBy: "--- ").first ?? "" }
        let list = section("list")
        #expect(list.contains("Bank: bob  HOTP\n") && list.contains("Mail: ann  TOTP\n"), "names and types without the key: \(list)")
        #expect(list.hasSuffix("status=0\n"), "\(list)")
        #expect(list.contains("coffer: note: Run coffer in your desktop session, or run `coffer key move --to file` there once"), "\(list)")
        #expect(section("json") == "2\n", "\(out)")
        let code = section("code")
        #expect(code.hasPrefix("coffer: Run coffer in your desktop session") && code.hasSuffix("status=69\n"), "\(code)")
        #expect(code.split(separator: "\n").count == 2 && code.count < 260, "one line, short: \(code)")
        for said in [list, code] {
            #expect(!said.contains("file backend") && !said.contains("dbus-run-session"), "only coffer's own words: \(said)")
        }
        #expect(section("secret").hasSuffix("status=69\n") && !section("secret").contains("secrets are printed below"), "\(out)")
        #expect(section("back") == "status=0\n", "nothing was changed: \(out)")
    }

    @Test("the key file at 0644, another user's, a link; export to a directory, a missing one, a link; the first key made in a file is said once")
    func fileFaults() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let attacker = SecondUser.identity.map { "\($0.uid)" } ?? ""
        let result = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", """
                set -u
                key="$COFFER_HOME/keys/org.coffer.authenticator.key"
                echo '--- first'
                echo 'otpauth://totp/A:b?secret=JBSWY3DPEHPK3PXP&issuer=A' | "$COFFER" add - 2>&1
                echo 'otpauth://totp/A:c?secret=JBSWY3DPEHPK3PXP&issuer=A' | "$COFFER" add - 2>&1
                echo '--- mode'; chmod 644 "$key"; "$COFFER" code a:b 2>&1; echo "status=$?"; chmod 600 "$key"
                if [ -n "$ATTACKER" ]; then
                  echo '--- owner'; chown "$ATTACKER" "$key"; "$COFFER" code a:b 2>&1; echo "status=$?"; chown "$(id -u)" "$key"
                fi
                echo '--- link'; mv "$key" "$SCRATCH/real.key"; ln -s "$SCRATCH/real.key" "$key"; "$COFFER" code a:b 2>&1; echo "status=$?"
                rm "$key"; mv "$SCRATCH/real.key" "$key"
                cd "$SCRATCH"; mkdir exports; ln -s "$SCRATCH/elsewhere.json" link.json
                echo '--- directory'; "$COFFER" export exports 2>&1; echo "status=$?"
                echo '--- missing'; "$COFFER" export "$SCRATCH/nowhere/a.json" 2>&1; echo "status=$?"
                echo '--- export-link'; "$COFFER" export link.json 2>&1; echo "status=$?"
                echo '--- end'
                "$COFFER" code a:b --raw > /dev/null && echo "still-opens"
                """],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path, "ATTACKER": attacker],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        func part(_ name: String) -> String {
            out.components(separatedBy: "--- \(name)\n").dropFirst().first?.components(separatedBy: "--- ")[0] ?? "(missing)"
        }
        let first = part("first")
        #expect(first.components(separatedBy: "the accounts' key was made in the file").count == 2, "said once, at the first add: \(first)")
        #expect(first.contains("coffer key move --to tpm"), "\(first)")
        var expected = [
            ("mode", "coffer: Run `chmod 600 "),
            ("link", "org.coffer.authenticator.key is a symbolic link"),
            ("directory", "coffer: exports is a directory; name a file instead"),
            ("missing", "coffer: Create \(scratch.url.path)/nowhere first"),
            ("export-link", "coffer: link.json is a symbolic link"),
        ]
        if !attacker.isEmpty { expected.append(("owner", "org.coffer.authenticator.key belongs to uid \(attacker), not to you")) }
        for (name, start) in expected {
            let text = part(name)
            let errors = text.split(separator: "\n").filter { $0.hasPrefix("coffer: ") && !$0.contains("warning:") }
            #expect(errors.count == 1, "\(name): one line: \(text)")
            #expect(errors.first?.contains(start) == true, "\(name): leads with '\(start)': \(text)")
            #expect(text.contains("status=1"), "\(name): \(text)")
            for fragment in ["mechanism/", "secret#", "#v2", "delete it", "planted", "Could not decrypt"] {
                #expect(!text.contains(fragment), "\(name): no '\(fragment)': \(text)")
            }
        }
        #expect(out.contains("still-opens"), "nothing was changed by any of it")
    }
}
