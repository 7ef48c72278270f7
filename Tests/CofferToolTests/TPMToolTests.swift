import Foundation
import TestSupport
import Testing

/// Issue 22: `coffer key move --to tpm` and back, as a person runs it, on a software TPM of the
/// test's own (and a second one standing for another machine).
@Suite("coffer with the accounts' key sealed by a TPM", .enabled(if: SoftwareTPM.isAvailable))
struct TPMToolTests {
    /// Runs `script` under bash with `$COFFER`, `$SCRATCH` and a data directory without a keyring.
    static func run(_ script: String, tpm: SoftwareTPM, scratch: TemporaryDirectory,
                    environment: [String: String] = [:]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", "set -u\n" + script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path, "COFFER_TPM_TCTI": tpm.tcti,
                          "TPM2TOOLS_TCTI": tpm.tcti].merging(environment) { $1 },
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "COFFER_TPM_PIN_FILE"], deadline: .seconds(120))
    }

    @Test("key move --to tpm and back: nothing resealed, the file key removed, another TPM opens and deletes nothing")
    func moveToTPMAndBack() async throws {
        let own = try await SoftwareTPM.start()
        let other = try await SoftwareTPM.start()
        defer { own.remove(); other.remove() }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo 'otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno&period=86400' | "$COFFER" add - || exit 10
            before=$("$COFFER" code deno --raw) || exit 11
            "$COFFER" key move --to tpm || exit 12
            echo "record=$(cat "$COFFER_HOME/authenticator.keystore")"
            echo "mode=$(stat -c %a "$COFFER_HOME/keys/org.coffer.authenticator.tpm-key")"
            [ -e "$COFFER_HOME/keys/org.coffer.authenticator.key" ] || echo "file-key-removed"
            [ "$("$COFFER" code deno --raw)" = "$before" ] && echo "same-code-from-tpm"
            "$COFFER" key show
            "$COFFER" doctor | grep TPM
            sum=$(sha256sum "$COFFER_HOME/keys/org.coffer.authenticator.tpm-key")
            echo "--- other TPM"
            COFFER_TPM_TCTI="\(other.tcti)" "$COFFER" code deno --raw 2>&1; echo "other-status=$?"
            COFFER_TPM_TCTI="\(other.tcti)" "$COFFER" doctor | grep 'TPM key'; echo "other-doctor=${PIPESTATUS[0]}"
            [ "$(sha256sum "$COFFER_HOME/keys/org.coffer.authenticator.tpm-key")" = "$sum" ] && echo "file-unchanged"
            echo "--- back"
            [ "$("$COFFER" code deno --raw)" = "$before" ] && echo "same-code-back-home"
            "$COFFER" key move --to file || exit 13
            [ -e "$COFFER_HOME/keys/org.coffer.authenticator.tpm-key" ] || echo "tpm-key-removed"
            [ "$("$COFFER" code deno --raw)" = "$before" ] && echo "same-code-from-file"
            "$COFFER" key new-kek "$SCRATCH/etc/coffer/pg.kek" > /dev/null || exit 14
            echo "kek-dirs=$(stat -c %a "$SCRATCH/etc" "$SCRATCH/etc/coffer" | tr '\\n' ' ')"
            """, tpm: own, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        #expect(out.contains("record=tpm") && out.contains("mode=600") && out.contains("file-key-removed"), "\(out)")
        #expect(out.contains("same-code-from-tpm") && out.contains("The accounts' key is in the TPM"))
        #expect(out.contains("ok    TPM key: org.coffer.authenticator, no PCR policy, no PIN"), "\(out)")
        let elsewhere = out.components(separatedBy: "--- other TPM")[1].components(separatedBy: "--- back")[0]
        #expect(elsewhere.contains("sealed by another TPM") && elsewhere.contains("other-status=1"), "\(elsewhere)")
        #expect(elsewhere.split(separator: "\n").filter { $0.hasPrefix("coffer: ") }.count == 1, "one line: \(elsewhere)")
        #expect(elsewhere.contains("FAIL  TPM key: org.coffer.authenticator, no PCR policy, no PIN")
                && elsewhere.contains("sealed by another TPM") && elsewhere.contains("other-doctor=1"), "\(elsewhere)")
        #expect(out.contains("file-unchanged") && out.contains("same-code-back-home"))
        #expect(out.contains("tpm-key-removed") && out.contains("same-code-from-file"))
        #expect(out.contains("kek-dirs=700 700"), "key new-kek makes the missing directories 0700: \(out)")
    }

    @Test("4 processes reading codes at once with a TPM-sealed key all succeed and leave no object in the TPM")
    func fourProcessesAtOnce() async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.remove() }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo 'otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno&period=86400' | "$COFFER" add - > /dev/null || exit 10
            "$COFFER" key move --to tpm > /dev/null || exit 11
            for round in 1 2 3; do
              for i in 1 2 3 4; do "$COFFER" code deno --raw > "$SCRATCH/out.$round.$i" 2>&1 & done
              wait
            done
            cat "$SCRATCH"/out.* | sort | uniq -c
            echo "transient=$(tpm2_getcap handles-transient | grep -c 0x)"
            echo "sessions=$(tpm2_getcap handles-loaded-session | grep -c 0x)"
            """, tpm: tpm, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        let counts = out.split(separator: "\n").filter { $0.contains(" ") && !$0.contains("=") }
        #expect(counts.count == 1 && counts[0].trimmingCharacters(in: .whitespaces).hasPrefix("12 "), "12 identical codes: \(out)")
        #expect(out.contains("transient=0") && out.contains("sessions=0"), "every object and session flushed: \(out)")
        ReliabilityReport.record("R11", "4 coffer code processes at once unsealing a TPM-sealed key (no resource manager)",
                                 tried: "3 rounds × 4", outcome: "\(counts.first.map(String.init) ?? "?") (identical codes); transient objects and sessions left: 0")
    }

    @Test("a TPM PIN from a file: the right one opens, a wrong one is refused once per command, none at no terminal says how")
    func pin() async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.remove() }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            umask 077
            echo 2468 > "$SCRATCH/pin"; echo 1111 > "$SCRATCH/wrong"
            echo 'otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno&period=86400' | "$COFFER" add - || exit 10
            before=$("$COFFER" code deno --raw) || exit 11
            COFFER_TPM_PIN_FILE="$SCRATCH/pin" "$COFFER" key move --to tpm --pin --pcrs 7 || exit 12
            [ "$(COFFER_TPM_PIN_FILE="$SCRATCH/pin" "$COFFER" code deno --raw)" = "$before" ] && echo "right-pin-opens"
            echo "--- no pin"
            "$COFFER" code deno --raw < /dev/null 2>&1; echo "nopin-status=$?"
            echo "--- wrong pin"
            COFFER_TPM_PIN_FILE="$SCRATCH/wrong" "$COFFER" code deno --raw 2>&1; echo "wrong-status=$?"
            "$COFFER" doctor < /dev/null | grep 'TPM'
            """, tpm: tpm, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        #expect(out.contains("right-pin-opens"), "\(out)")
        let noPIN = out.components(separatedBy: "--- no pin")[1].components(separatedBy: "--- wrong pin")[0]
        #expect(noPIN.contains("COFFER_TPM_PIN_FILE") && noPIN.contains("nopin-status=1"), "\(noPIN)")
        let wrong = out.components(separatedBy: "--- wrong pin")[1]
        #expect(wrong.contains("The TPM PIN is wrong") && wrong.contains("wrong-status=1"), "\(wrong)")
        #expect(wrong.contains("1 of 3 wrong PINs counted"), "one command spends one try: \(wrong)")
        #expect(wrong.contains("bound to SHA-256 PCR 7, PIN"), "\(wrong)")
    }

    @Test("doctor without a TPM: a note when no key is sealed there, a failure when the key is")
    func doctorWithoutTPM() async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.remove() }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo 'otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno' | "$COFFER" add - || exit 10
            COFFER_TPM_TCTI="swtpm:path=$SCRATCH/none" "$COFFER" doctor | grep 'TPM'
            "$COFFER" key move --to tpm > /dev/null || exit 11
            COFFER_TPM_TCTI="swtpm:path=$SCRATCH/none" "$COFFER" doctor | grep 'TPM'; echo "doctor-status=${PIPESTATUS[0]}"
            """, tpm: tpm, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        #expect(out.contains("note  TPM: No TPM can be used here"), "\(out)")
        #expect(out.contains("FAIL  TPM: No TPM can be used here") && out.contains("doctor-status=1"), "\(out)")
    }

    /// Issue 30: a TCTI over TCP is a test set-up; any local user can listen on its port while
    /// the TPM is down and answer the first seal.
    @Test("R13: a TPM reached over TCP is warned about by key move, the account commands and doctor")
    func networkTCTI() async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.remove() }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo 'otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno' | "$COFFER" add - > /dev/null 2>&1 || exit 10
            "$COFFER" key move --to tpm > /dev/null 2>&1 || exit 11
            export COFFER_TPM_TCTI="swtpm:host=127.0.0.1,port=9"
            echo '--- code'; "$COFFER" code deno 2>&1 | grep warning
            echo '--- move'; "$COFFER" key move --to file 2>&1 | grep warning
            echo '--- doctor'; "$COFFER" doctor | grep 'TPM connection'
            """, tpm: tpm, scratch: scratch)
        let out = result.stdout
        for part in ["code", "move"] {
            let said = out.components(separatedBy: "--- \(part)\n")[1].components(separatedBy: "--- ")[0]
            #expect(said.hasPrefix("coffer: warning: COFFER_TPM_TCTI (swtpm:host=127.0.0.1,port=9) reaches the TPM over TCP")
                    && said.split(separator: "\n").count == 1, "\(part): \(said)")
        }
        #expect(out.contains("FAIL  TPM connection: COFFER_TPM_TCTI (swtpm:host=127.0.0.1,port=9) reaches the TPM over TCP"), "\(out)")
    }

    /// Found by the second review of issue 30: with no TCTI named and no TPM device, tpm2-tss
    /// went on to a software TPM on localhost TCP port 2321, which any local user can run.
    @Test("R13: with COFFER_TPM_TCTI unset and no TPM device, a software TPM listening on localhost:2321 is never used",
          .enabled(if: !FileManager.default.fileExists(atPath: "/dev/tpmrm0") && !FileManager.default.fileExists(atPath: "/dev/tpm0")))
    func noFallbackToTCP() async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.remove() }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            mkdir -p "$SCRATCH/listener"
            swtpm socket --tpm2 --tpmstate dir="$SCRATCH/listener" --server type=tcp,port=2321,bindaddr=127.0.0.1 \
              --ctrl type=tcp,port=2322,bindaddr=127.0.0.1 --flags not-need-init,startup-clear --daemon --pid file="$SCRATCH/listener/pid" || exit 9
            echo 'otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno' | "$COFFER" add - > /dev/null 2>&1 || exit 10
            unset COFFER_TPM_TCTI
            "$COFFER" key move --to tpm 2>&1; echo "status=$?"
            echo "record=$(cat "$COFFER_HOME/authenticator.keystore")"
            kill "$(cat "$SCRATCH/listener/pid")"
            """, tpm: tpm, scratch: scratch)
        let out = result.stdout
        #expect(out.contains("No TPM can be used here") && out.contains("status=69") && out.contains("record=file"), "\(out) \(result.stderr)")
    }

    @Test("tpm2-tss logging asked for in the environment writes nothing: the unsealed key never reaches a log")
    func tssLoggingStaysOff() async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.remove() }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo 'otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno&period=86400' | "$COFFER" add - > /dev/null || exit 10
            "$COFFER" key move --to tpm > /dev/null || exit 11
            TSS2_LOG=all+trace TSS2_LOGFILE="$SCRATCH/tss.log" "$COFFER" code deno --raw > "$SCRATCH/code" 2> "$SCRATCH/stderr" || exit 12
            echo "log-bytes=$(cat "$SCRATCH/tss.log" 2>/dev/null | wc -c)"
            echo "stderr-bytes=$(wc -c < "$SCRATCH/stderr")"
            echo "code=$(cat "$SCRATCH/code")"
            # The same settings make tpm2-tools log: the variables do reach the library.
            TSS2_LOG=all+trace TSS2_LOGFILE="$SCRATCH/tools.log" tpm2_getrandom 4 > /dev/null 2>&1
            echo "tools-log-bytes=$(cat "$SCRATCH/tools.log" 2>/dev/null | wc -c)"
            """, tpm: tpm, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        #expect(out.contains("log-bytes=0") && out.contains("stderr-bytes=0"), "\(out)")
        #expect(out.contains("code=") && !out.contains("code=\n"), "\(out)")
        #expect(!out.contains("tools-log-bytes=0"), "the probe itself logs, or the test proves nothing: \(out)")
    }

    @Test("a frozen TPM: a command over many accounts fails once, at the deadline, not once per account")
    func frozenTPMManyAccounts() async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.thaw(); tpm.remove() }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let prepared = try await Self.run("""
            for name in Ada Ben Cy Dee Eve Fay Gus Hal; do
              echo "otpauth://totp/Deno:$name?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno" | "$COFFER" add - > /dev/null || exit 10
            done
            "$COFFER" key move --to tpm > /dev/null || exit 11
            """, tpm: tpm, scratch: scratch)
        #expect(prepared.status == 0, "\(prepared.stdout) \(prepared.stderr)")
        tpm.freeze()
        let clock = ContinuousClock()
        let started = clock.now
        let frozen = try await Self.run(#""$COFFER" code 2>&1; echo "status=$?""#, tpm: tpm, scratch: scratch)
        let elapsed = clock.now - started
        tpm.thaw()
        #expect(frozen.stdout.contains("did not answer within 5 s") && frozen.stdout.contains("status=69"), "unavailable (issue 30): \(frozen.stdout)")
        #expect(frozen.stdout.split(separator: "\n").filter { $0.hasPrefix("coffer: ") }.count == 1, "\(frozen.stdout)")
        // A deadline per account would take at least 8 × 5 s = 40 s; one deadline, plus a loaded
        // machine's process start-ups (the whole suite runs at once: 15.4 s was seen, and 27.3 s on
        // a day the machine ran 2.5× slow), stays below that.
        #expect(elapsed < .seconds(38), "one deadline (5 s), not eight: \(elapsed)")
        let thawed = try await Self.run(#""$COFFER" code | grep -c Deno"#, tpm: tpm, scratch: scratch)
        #expect(thawed.stdout.hasPrefix("8"), "all eight open once the TPM answers: \(thawed.stdout)")
        ReliabilityReport.record("R11", "coffer code over 8 accounts with the TPM frozen (SIGSTOP)", tried: "1 command",
                                 outcome: "one error line after \(elapsed) (deadline 5 s); all 8 codes once thawed")
    }
}
