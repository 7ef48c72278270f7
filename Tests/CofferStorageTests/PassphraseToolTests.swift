import Foundation
import TestSupport
import Testing

/// Issue 22: `coffer key move --to passphrase`, as a person without a keyring session or a TPM
/// runs it.
@Suite("coffer with the accounts' key under a passphrase")
struct PassphraseToolTests {
    @Test("move there with --remember and back: nothing resealed; a wrong passphrase is one line and deletes nothing; remembered, then forgotten")
    func moveThereAndBack() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", """
                set -u
                umask 077
                echo 'a long passphrase for tests' > "$SCRATCH/pw"; echo 'not it' > "$SCRATCH/wrong"
                echo 'otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno&period=86400' | "$COFFER" add - > /dev/null || exit 10
                before=$("$COFFER" code deno --raw) || exit 11
                "$COFFER" key move --to passphrase --remember 1h --password-file "$SCRATCH/pw" || exit 12
                echo "record=$(cat "$COFFER_HOME/authenticator.keystore")"
                echo "mode=$(stat -c %a "$COFFER_HOME/keys/org.coffer.authenticator.passphrase-key")"
                [ -e "$COFFER_HOME/keys/org.coffer.authenticator.key" ] || echo "file-key-removed"
                grep -c 'a long passphrase' "$COFFER_HOME/keys/org.coffer.authenticator.passphrase-key"
                [ "$("$COFFER" code deno --raw < /dev/null)" = "$before" ] && echo "remembered-opens"
                "$COFFER" key forget
                echo "--- no passphrase"
                "$COFFER" code deno --raw < /dev/null 2>&1; echo "none-status=$?"
                echo "--- wrong"
                sum=$(sha256sum "$COFFER_HOME/keys/org.coffer.authenticator.passphrase-key")
                COFFER_KEY_PASSWORD_FILE="$SCRATCH/wrong" "$COFFER" code deno --raw 2>&1; echo "wrong-status=$?"
                [ "$(sha256sum "$COFFER_HOME/keys/org.coffer.authenticator.passphrase-key")" = "$sum" ] && echo "file-unchanged"
                echo "--- right"
                [ "$(COFFER_KEY_PASSWORD_FILE="$SCRATCH/pw" "$COFFER" code deno --raw)" = "$before" ] && echo "right-opens"
                "$COFFER" doctor < /dev/null | grep 'key store:'
                COFFER_KEY_PASSWORD_FILE="$SCRATCH/pw" "$COFFER" key move --to file || exit 13
                [ -e "$COFFER_HOME/keys/org.coffer.authenticator.passphrase-key" ] || echo "passphrase-key-removed"
                [ "$("$COFFER" code deno --raw)" = "$before" ] && echo "same-code-from-file"
                "$COFFER" key move --to passphrase --remember 99d --password-file "$SCRATCH/pw" 2>&1; echo "bad-remember=$?"
                """],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "COFFER_KEY_PASSWORD", "COFFER_KEY_PASSWORD_FILE"])
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        #expect(out.contains("record=passphrase") && out.contains("mode=600") && out.contains("file-key-removed"), "\(out)")
        #expect(out.contains("\n0\n"), "the passphrase is not in the file: \(out)")
        #expect(out.contains("remembered-opens") && out.contains("Forgot the remembered key"))
        let none = out.components(separatedBy: "--- no passphrase")[1].components(separatedBy: "--- wrong")[0]
        #expect(none.contains("COFFER_KEY_PASSWORD_FILE") && none.contains("none-status=1"), "\(none)")
        let wrong = out.components(separatedBy: "--- wrong")[1].components(separatedBy: "--- right")[0]
        #expect(wrong.contains("passphrase is wrong") && wrong.contains("wrong-status=1") && wrong.contains("file-unchanged"), "\(wrong)")
        #expect(wrong.split(separator: "\n").filter { $0.hasPrefix("coffer: ") }.count == 1, "one line: \(wrong)")
        #expect(out.contains("right-opens"))
        #expect(out.contains("key store: under a passphrase (scrypt N=2^15, r=8, p=1); remembered 3600 s"), "\(out)")
        #expect(out.contains("passphrase-key-removed") && out.contains("same-code-from-file"))
        #expect(out.contains("--remember takes a duration up to 7d") && out.contains("bad-remember=1"), "\(out)")
    }
}
