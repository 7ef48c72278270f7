import CofferAuthenticator
import Foundation
import TestSupport
import Testing

/// Issue 30, point 4 (the fourth attack review): with the key file moved aside, `coffer rename`
/// exited 0, wrote a new key file and sealed its trash entry under it — the trash and the HOTP
/// counter record sealed through the encryptor directly, which makes a key when the store has
/// none. Every writer now seals through the store's one checked path. Tried here with the key
/// absent from each key store, for every command that seals.
@Suite("R13: nothing is sealed under a second key while the store's key is missing", .serialized,
       .enabled(if: SoftwareTPM.isAvailable))
struct SecondKeyAttackTests {
    /// Where the key is, and how the test takes it away.
    struct Place: Sendable, CustomTestStringConvertible {
        let name: String
        /// Shell commands that take the key away (and keep it, to bring back).
        let takeAway: String
        let bringBack: String
        var testDescription: String { name }
    }

    static let places: [Place] = [
        Place(name: "file", takeAway: #"mv "$KEY.key" "$SCRATCH/aside""#, bringBack: #"mv "$SCRATCH/aside" "$KEY.key""#),
        Place(name: "passphrase", takeAway: #"mv "$KEY.passphrase-key" "$SCRATCH/aside""#,
              bringBack: #"mv "$SCRATCH/aside" "$KEY.passphrase-key""#),
        Place(name: "tpm", takeAway: #"mv "$KEY.tpm-key" "$SCRATCH/aside""#, bringBack: #"mv "$SCRATCH/aside" "$KEY.tpm-key""#),
        Place(name: "keyring", takeAway: #"secret-tool lookup service org.coffer.keys alias org.coffer.authenticator > "$SCRATCH/aside" && secret-tool clear service org.coffer.keys alias org.coffer.authenticator"#,
              bringBack: #"secret-tool store --label 'Coffer key' service org.coffer.keys alias org.coffer.authenticator < "$SCRATCH/aside""#),
    ]

    @Test("rename, remove, restore, add, import --overwrite, code (HOTP) and trash --empty seal nothing and make no key; the key back, all goes on",
          arguments: places)
    func keyAbsent(place: Place) async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.remove() }
        let secret = TestSecret.random()
        let result = try await PrivateSession.run("""
            set -u
            export COFFER_HOME="$SCRATCH/home" COFFER_KEY_PASSWORD=correct-horse-battery COFFER_TPM_TCTI='\(tpm.tcti)'
            \(place.name == "keyring" ? "" : "unset DBUS_SESSION_BUS_ADDRESS")
            KEY="$COFFER_HOME/keys/org.coffer.authenticator"
            echo 'otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank&counter=0' | "$COFFER" add - > /dev/null 2>&1 || exit 10
            echo 'otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail' | "$COFFER" add - > /dev/null 2>&1 || exit 11
            echo 'otpauth://totp/Old:x?secret=JBSWY3DPEHPK3PXP&issuer=Old' | "$COFFER" add - > /dev/null 2>&1 || exit 12
            "$COFFER" code bank --raw > /dev/null || exit 13
            "$COFFER" remove old --yes > /dev/null || exit 14
            "$COFFER" rename mail --issuer Post > /dev/null || exit 15
            renamed=$("$COFFER" trash --json | grep '"id"' | head -1 | cut -d'"' -f4)
            # An account without a mechanism (a replacement killed halfway leaves one): nothing of
            # it is sealed, so only the writers' own check stands between a rename and a new key.
            echo 'otpauth://totp/Bare:b?secret=JBSWY3DPEHPK3PXP&issuer=Bare' | "$COFFER" add - > /dev/null 2>&1 || exit 21
            python3 -c 'import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); db.execute("DELETE FROM mechanism WHERE issuer = ?", ("Bare",)); db.commit()' \
              "$COFFER_HOME/authenticator.sqlite" || exit 22
            "$COFFER" export "$SCRATCH/backup.json" > /dev/null 2>&1 || exit 16
            case "$(cat "$COFFER_HOME/authenticator.keystore")" in
              secret-service) [ \(place.name) = keyring ] || exit 17;;
              *) [ \(place.name) = file ] || "$COFFER" key move --to \(place.name) > /dev/null || exit 18;;
            esac
            echo "record=$(cat "$COFFER_HOME/authenticator.keystore")"
            state() {
              (cd "$COFFER_HOME" && ls -A keys trash | sort | tr '\\n' ' '; sha256sum hotp-counters trash/* 2> /dev/null | sort | sha256sum | cut -c1-16)
              secret-tool search --all service org.coffer.keys 2> /dev/null | grep -c '^\\[' || true
              "$COFFER" list 2> /dev/null | tail -n +2
            }
            \(place.takeAway) || exit 19
            before=$(state)
            try() { name=$1; shift; "$@" > "$SCRATCH/out" 2>&1; status=$?; echo "$name=$status $(head -1 "$SCRATCH/out")"
                    [ "$(state)" = "$before" ] && echo "$name unchanged" || echo "$name CHANGED: $(state)"; }
            try rename "$COFFER" rename bank --issuer Other
            try rename-bare "$COFFER" rename bare --issuer Other
            try remove-totp "$COFFER" remove post --yes
            try remove-hotp "$COFFER" remove bank --yes
            try restore "$COFFER" restore "$renamed"
            try add sh -c 'echo "otpauth://totp/New:x?secret=JBSWY3DPEHPK3PXP&issuer=New" | "$COFFER" add -'
            try import "$COFFER" import "$SCRATCH/backup.json" --overwrite
            try code-hotp "$COFFER" code bank --raw
            try empty "$COFFER" trash --empty
            \(place.bringBack) || exit 20
            echo "--- back"
            "$COFFER" code bank --raw; echo "code=$?"
            "$COFFER" rename bank --issuer Other > /dev/null; echo "rename=$?"
            "$COFFER" restore "$renamed" > /dev/null; echo "restore=$?"
            "$COFFER" doctor | grep -c '^FAIL' || true
            """, keyring: place.name == "keyring", deadline: .seconds(300))
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        let record = place.name == "keyring" ? "secret-service" : place.name
        #expect(out.contains("record=\(record)\n"), "\(out)")
        for name in ["rename", "rename-bare", "remove-totp", "remove-hotp", "restore", "add", "import", "code-hotp", "empty"] {
            let line = out.split(separator: "\n").first { $0.hasPrefix("\(name)=") } ?? "missing"
            #expect(!line.hasPrefix("\(name)=0 "), "\(place.name): \(name) fails while the key is missing: \(line)")
            #expect(out.contains("\(name) unchanged\n"), "\(place.name): \(name) made no key, sealed nothing, changed nothing: \(out)")
        }
        let back = out.components(separatedBy: "--- back\n").last ?? ""
        let codes = try (1...1).map { try OathGenerator.hotp(secret: Base32.decode(secret), counter: UInt64($0)) }
        #expect(back.hasPrefix("\(codes[0])\ncode=0\nrename=0\nrestore=0\n0\n"), "\(place.name): the key back, everything goes on: \(back)")
        ReliabilityReport.record("R13", "9 sealing commands with the \(place.name) key store's key missing", tried: "9 commands",
                                 outcome: out.contains("CHANGED") ? "SOMETHING CHANGED" : "all refused; no key made, nothing sealed")
    }
}
