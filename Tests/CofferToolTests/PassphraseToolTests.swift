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

    /// Runs `script` under bash with `$COFFER`, `$SCRATCH`, a data directory without a keyring,
    /// and one account (Deno) whose key is under the passphrase in `$SCRATCH/pw`.
    static func runWithPassphraseKey(_ script: String, scratch: TemporaryDirectory,
                                     environment: [String: String] = [:]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", """
                set -u
                umask 077
                echo 'a long passphrase for tests' > "$SCRATCH/pw"
                echo 'otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno&period=86400' | "$COFFER" add - > /dev/null || exit 10
                before=$("$COFFER" code deno --raw) || exit 11

                """ + script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path].merging(environment) { $1 },
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "COFFER_KEY_PASSWORD", "COFFER_KEY_PASSWORD_FILE"],
            deadline: .seconds(180))
    }

    @Test("moves the opposite ways at once never lose the key: one at a time, under the data directory's lock")
    func racingMoves() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.runWithPassphraseKey("""
            export COFFER_KEY_PASSWORD_FILE="$SCRATCH/pw"
            # The lock is taken before anything is read: a move waits while another holds it.
            "$COFFER" key show > /dev/null || exit 12
            flock "$COFFER_HOME/.key-move.lock" sleep 2 &
            sleep 0.3
            start=$(date +%s%N)
            "$COFFER" key move --to passphrase --password-file "$SCRATCH/pw" > /dev/null || exit 13
            echo "waited-ms=$(( ($(date +%s%N) - start) / 1000000 ))"
            wait
            lost=0
            for round in 1 2 3 4 5 6; do
              "$COFFER" key move --to file > /dev/null 2>> "$SCRATCH/errors" &
              "$COFFER" key move --to passphrase --password-file "$SCRATCH/pw" > /dev/null 2>> "$SCRATCH/errors" &
              "$COFFER" key move --to file > /dev/null 2>> "$SCRATCH/errors" &
              "$COFFER" key move --to passphrase --password-file "$SCRATCH/pw" > /dev/null 2>> "$SCRATCH/errors" &
              wait
              [ "$("$COFFER" code deno --raw 2>> "$SCRATCH/errors")" = "$before" ] || lost=$((lost + 1))
            done
            echo "lost=$lost"
            echo "record=$(cat "$COFFER_HOME/authenticator.keystore")"
            ls "$COFFER_HOME/keys" | sed 's/^/key-file: /'
            # Refused and nothing moved: a move waits for others at most KeyMove.patience.
            grep -v 'is already in' "$SCRATCH/errors" | grep -v 'Another command kept using the accounts' | sed 's/^/unexpected: /'
            """, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        let waited = out.split(separator: "\n").first { $0.hasPrefix("waited-ms=") }.flatMap { Int($0.dropFirst(10)) } ?? 0
        #expect(waited >= 1_200, "the move waited for the lock held by another: \(out)")
        #expect(out.contains("lost=0"), "\(out)")
        #expect(!out.contains("unexpected: "), "only 'already there' and 'busy' refusals: \(out)")
        let files = out.split(separator: "\n").filter { $0.hasPrefix("key-file: ") && !$0.hasSuffix(".lock") }
        #expect(files.count == 1, "one copy of the key, where the record says: \(out)")
        ReliabilityReport.record("R11", "key move --to file and --to passphrase, 2 of each at once", tried: "6 rounds × 4 processes",
                                 outcome: "codes lost: 0; one key copy left; a move waits while another holds the lock")
    }

    @Test("passphrase files and --remember: a file others can read or write, another's file, a link and an absurd duration are refused, nothing moved")
    func untrustedPassphraseFiles() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let attacker = SecondUser.identity.map { "\($0.uid):\($0.gid)" } ?? ""
        let result = try await Self.runWithPassphraseKey("""
            try() { echo "--- $1"; shift; "$@" 2>&1; echo "status=$?"; echo "record=$(cat "$COFFER_HOME/authenticator.keystore")"; }
            cp "$SCRATCH/pw" "$SCRATCH/open"; chmod 644 "$SCRATCH/open"
            cp "$SCRATCH/pw" "$SCRATCH/writable"; chmod 622 "$SCRATCH/writable"
            ln -s "$SCRATCH/pw" "$SCRATCH/link"
            try open "$COFFER" key move --to passphrase --password-file "$SCRATCH/open"
            try writable "$COFFER" key move --to passphrase --password-file "$SCRATCH/writable"
            try link "$COFFER" key move --to passphrase --password-file "$SCRATCH/link"
            if [ -n "$ATTACKER" ]; then
              cp "$SCRATCH/pw" "$SCRATCH/foreign"; chown "$ATTACKER" "$SCRATCH/foreign"
              try foreign "$COFFER" key move --to passphrase --password-file "$SCRATCH/foreign"
            fi
            try forever "$COFFER" key move --to passphrase --remember 999999999999999999d --password-file "$SCRATCH/pw"
            "$COFFER" key move --to passphrase --password-file "$SCRATCH/pw" > /dev/null || exit 12
            try env-open env COFFER_KEY_PASSWORD_FILE="$SCRATCH/open" "$COFFER" code deno --raw
            # One-character names, as typed in the directory they are in: a directory, then a file.
            cd "$SCRATCH" && mkdir d && cp pw p
            try env-directory env COFFER_KEY_PASSWORD_FILE=d "$COFFER" code deno --raw
            [ "$(COFFER_KEY_PASSWORD_FILE=p "$COFFER" code deno --raw)" = "$before" ] && echo "short-name-opens"
            echo "--- end"
            """, scratch: scratch, environment: ["ATTACKER": attacker])
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        var cases = ["open", "writable", "link", "forever", "env-open", "env-directory"]
        if !attacker.isEmpty { cases.append("foreign") }
        for name in cases {
            let part = out.components(separatedBy: "--- \(name)\n").dropFirst().first?.components(separatedBy: "--- ")[0] ?? "(missing)"
            #expect(part.contains("status=1") && !part.contains("a long passphrase"), "\(name): \(part)")
            #expect(part.split(separator: "\n").filter { $0.hasPrefix("coffer: ") }.count == 1, "one line: \(part)")
            if !name.hasPrefix("env-") { #expect(part.contains("record=file"), "nothing moved: \(part)") }
        }
        #expect(out.contains("short-name-opens"), "\(out)")
        #expect(out.contains("--remember takes a duration up to 7d"), "\(out)")
    }
}
