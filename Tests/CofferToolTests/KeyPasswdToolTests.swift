import Foundation
import TestSupport
import Testing

/// Issue 33, point 2: a passphrase (and a TPM PIN) you can change, and --remember you can turn
/// on and off, atomically and kill-safe.
@Suite("coffer key passwd")
struct KeyPasswdToolTests {
    static func run(_ script: String, scratch: TemporaryDirectory, environment: [String: String] = [:]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", """
                set -u
                umask 077
                printf 'first passphrase 1\\n' > "$SCRATCH/p1"; printf 'second passphrase 2\\n' > "$SCRATCH/p2"
                printf 'third passphrase 3\\n' > "$SCRATCH/p3"
                echo 'otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno&period=86400' | "$COFFER" add - > /dev/null || exit 10
                before=$("$COFFER" code deno --raw) || exit 11
                opens() { [ "$(COFFER_KEY_PASSWORD_FILE="$SCRATCH/$1" "$COFFER" code deno --raw < /dev/null 2>/dev/null)" = "$before" ]; }

                """ + script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path].merging(environment) { $1 },
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "COFFER_KEY_PASSWORD", "COFFER_KEY_PASSWORD_FILE", "COFFER_TPM_PIN_FILE"],
            deadline: .seconds(240))
    }

    @Test("the passphrase changes in place: the new one opens, the old one not; a wrong current one changes nothing; --remember on and off")
    func changeAndRemember() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            "$COFFER" key move --to passphrase --password-file "$SCRATCH/p1" > /dev/null || exit 12
            echo '--- change'; COFFER_KEY_PASSWORD_FILE="$SCRATCH/p1" "$COFFER" key passwd --password-file "$SCRATCH/p2"; echo "status=$?"
            opens p2 && echo new-opens; opens p1 || echo old-refused
            echo "mode=$(stat -c %a "$COFFER_HOME/keys/org.coffer.authenticator.passphrase-key")"
            grep -c 'second passphrase' "$COFFER_HOME/keys/org.coffer.authenticator.passphrase-key"
            echo '--- wrong'; sum=$(sha256sum < "$COFFER_HOME/keys/org.coffer.authenticator.passphrase-key")
            COFFER_KEY_PASSWORD_FILE="$SCRATCH/p1" "$COFFER" key passwd --password-file "$SCRATCH/p3" 2>&1; echo "status=$?"
            [ "$(sha256sum < "$COFFER_HOME/keys/org.coffer.authenticator.passphrase-key")" = "$sum" ] && echo unchanged
            echo '--- remember'; COFFER_KEY_PASSWORD_FILE="$SCRATCH/p2" "$COFFER" key passwd --password-file "$SCRATCH/p2" --remember 1h; echo "status=$?"
            opens p2 && echo opened-once; "$COFFER" code deno --raw < /dev/null > /dev/null 2>&1 && echo remembered
            "$COFFER" doctor < /dev/null | grep 'key store:'
            echo '--- off'; COFFER_KEY_PASSWORD_FILE="$SCRATCH/p2" "$COFFER" key passwd --password-file "$SCRATCH/p2" --remember off; echo "status=$?"
            "$COFFER" code deno --raw < /dev/null > /dev/null 2>&1 || echo not-remembered
            "$COFFER" doctor < /dev/null | grep 'key store:'
            echo '--- file'; COFFER_KEY_PASSWORD_FILE="$SCRATCH/p2" "$COFFER" key move --to file > /dev/null; "$COFFER" key passwd 2>&1; echo "status=$?"
            """, scratch: scratch)
        let out = result.stdout
        func part(_ name: String) -> String { out.components(separatedBy: "--- \(name)\n").dropFirst().first?.components(separatedBy: "--- ")[0] ?? "" }
        #expect(part("change").contains("Changed the passphrase of the accounts' key; nothing was sealed again.\nstatus=0"), "\(out) \(result.stderr)")
        #expect(part("change").contains("new-opens\nold-refused\nmode=600\n0\n"), "\(out)")
        #expect(part("wrong").contains("passphrase is wrong") && part("wrong").contains("status=1\nunchanged"), "\(out)")
        #expect(part("remember").contains("status=0\nopened-once\nremembered"), "\(out)")
        #expect(part("remember").contains("remembered 3600 s"), "\(out)")
        #expect(part("off").contains("status=0\nnot-remembered") && !part("off").contains("remembered 3600 s"), "\(out)")
        #expect(part("file").contains("which no passphrase or PIN seals; coffer key move --to passphrase") && part("file").contains("status=1"), "\(out)")
    }

    @Test("killed at each rename, fsync and write, the old passphrase or the new one opens the accounts; two changes at once: exactly one wins",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace to kill at each step"))
    func killedAndRaced() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            "$COFFER" key move --to passphrase --password-file "$SCRATCH/p1" > /dev/null || exit 12
            current=p1; next=p2
            # SIGKILL at each rename, fsync and write the change makes (strace counts them, then
            # kills at the k-th), and at a few moments by the clock.
            for call in rename fsync write; do
              COFFER_KEY_PASSWORD_FILE="$SCRATCH/$current" strace -f -qq -o "$SCRATCH/count" -e trace=$call \
                "$COFFER" key passwd --password-file "$SCRATCH/$next" > /dev/null 2>&1 || { echo "setup failed"; exit 1; }
              tmp=$current; current=$next; next=$tmp
              total=$(grep -c " $call(" "$SCRATCH/count")
              for k in $(seq 1 "$total"); do
                COFFER_KEY_PASSWORD_FILE="$SCRATCH/$current" strace -f -qq -o /dev/null -e trace=$call -e inject=$call:signal=KILL:when=$k \
                  "$COFFER" key passwd --password-file "$SCRATCH/$next" > /dev/null 2>&1
                if opens "$next"; then echo "moved at $call#$k"; tmp=$current; current=$next; next=$tmp
                elif opens "$current"; then echo "kept at $call#$k"
                else echo "LOST at $call#$k"; fi
              done
            done
            for delay in 0.1 0.3 0.5 0.7; do
              COFFER_KEY_PASSWORD_FILE="$SCRATCH/$current" "$COFFER" key passwd --password-file "$SCRATCH/$next" > /dev/null 2>&1 & pid=$!
              sleep "$delay"; kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
              if opens "$next"; then echo "moved"; tmp=$current; current=$next; next=$tmp
              elif opens "$current"; then echo "kept"
              else echo "LOST after $delay"; fi
            done
            echo '--- race'
            COFFER_KEY_PASSWORD_FILE="$SCRATCH/$current" "$COFFER" key passwd --password-file "$SCRATCH/p3" > /dev/null 2>&1 & a=$!
            other=$next
            COFFER_KEY_PASSWORD_FILE="$SCRATCH/$current" "$COFFER" key passwd --password-file "$SCRATCH/$other" > /dev/null 2>&1 & b=$!
            wait $a; sa=$?; wait $b; sb=$?
            echo "statuses=$((sa + sb))"
            n=0; for p in p3 "$other"; do opens "$p" && n=$((n + 1)); done; echo "opening=$n"
            """, scratch: scratch)
        let out = result.stdout
        #expect(!out.contains("LOST") && !out.contains("setup failed"), "\(out) \(result.stderr)")
        let kills = out.components(separatedBy: "\n").filter { $0.hasPrefix("moved") || $0.hasPrefix("kept") }
        #expect(kills.count >= 8 && kills.contains { $0.hasPrefix("kept at rename") }, "each step was tried: \(out)")
        ReliabilityReport.record("R13", "key passwd killed (SIGKILL) at each rename, fsync and write", tried: "\(kills.count) kills",
                                 outcome: "the old or the new passphrase opens: \(kills.count) of \(kills.count)")
        #expect(out.contains("statuses=1\n") && out.contains("opening=1"), "one change wins, the other fails and changes nothing: \(out)")
    }

    @Test("the TPM's PIN changes, and --no-pin removes it", .enabled(if: SoftwareTPM.isAvailable))
    func tpmPIN() async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.remove() }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo 2468 > "$SCRATCH/pin1"; echo 1357 > "$SCRATCH/pin2"
            COFFER_TPM_PIN_FILE="$SCRATCH/pin1" "$COFFER" key move --to tpm --pin > /dev/null || exit 12
            echo '--- change'; COFFER_TPM_PIN_FILE="$SCRATCH/pin1" "$COFFER" key passwd --pin-file "$SCRATCH/pin2"; echo "status=$?"
            [ "$(COFFER_TPM_PIN_FILE="$SCRATCH/pin2" "$COFFER" code deno --raw)" = "$before" ] && echo new-pin-opens
            COFFER_TPM_PIN_FILE="$SCRATCH/pin1" "$COFFER" code deno --raw > /dev/null 2>&1 || echo old-pin-refused
            echo '--- none'; COFFER_TPM_PIN_FILE="$SCRATCH/pin2" "$COFFER" key passwd --no-pin; echo "status=$?"
            [ "$("$COFFER" code deno --raw < /dev/null)" = "$before" ] && echo opens-without-pin
            """, scratch: scratch, environment: ["COFFER_TPM_TCTI": tpm.tcti])
        let out = result.stdout
        #expect(out.contains("Changed the TPM PIN of the accounts' key; nothing was sealed again.\nstatus=0\nnew-pin-opens\nold-pin-refused"),
                "\(out) \(result.stderr)")
        #expect(out.contains("has no PIN now; nothing was sealed again.\nstatus=0\nopens-without-pin"), "\(out) \(result.stderr)")
    }
}
