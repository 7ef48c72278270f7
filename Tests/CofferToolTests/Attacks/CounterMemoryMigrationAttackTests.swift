import Foundation
import TestSupport
import Testing

/// Issue 30, point 5 (the fourth attack review): the counter memory stayed behind on
/// `migrate`. Issue 3 HOTP codes, remove the account, empty the trash, `coffer migrate --to
/// keychain`, add the original QR code again: counter 0's code was issued again, because only
/// the SQLite path read `hotp-counters`, and the keyring and PostgreSQL backends ignored the
/// floor. Every built-in store now keeps a ledger, and migrate carries it.
@Suite("R13: the HOTP counter memory follows the store")
struct CounterMemoryMigrationAttackTests {
    @Test("removed and emptied on sqlite, migrated to the keyring, added again: it goes on; removed there, migrated back, added again: it goes on")
    func acrossMigrations() async throws {
        let result = try await PrivateSession.run("""
            set -u
            export COFFER_HOME="$SCRATCH/home"
            uri='\(TrashToolTests.hotp)'
            # The first add chooses the keyring for the key; the accounts start in SQLite.
            echo "$uri" | "$COFFER" add - > /dev/null 2>&1 || exit 10
            "$COFFER" code bank --raw; "$COFFER" code bank --raw; "$COFFER" code bank --raw
            "$COFFER" remove bank --yes > /dev/null || exit 11
            "$COFFER" trash --empty > /dev/null || exit 12
            echo 'otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail' | "$COFFER" add - > /dev/null 2>&1 || exit 13
            echo '--- to keychain'
            "$COFFER" migrate --to keychain 2>&1 | head -1 || exit 14
            echo "$uri" | "$COFFER" add - > /dev/null 2>&1 || exit 15
            "$COFFER" code bank --raw
            "$COFFER" remove bank --yes > /dev/null || exit 16
            echo "$uri" | "$COFFER" add - > /dev/null 2>&1 || exit 17
            "$COFFER" code bank --raw
            "$COFFER" remove bank --yes > /dev/null || exit 18
            echo '--- to sqlite'
            "$COFFER" migrate --to sqlite 2>&1 | head -1 || exit 19
            echo "$uri" | "$COFFER" add - > /dev/null 2>&1 || exit 20
            "$COFFER" code bank --raw
            """, keyring: true, deadline: .seconds(120))
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        #expect(out.hasPrefix("755224\n287082\n359152\n--- to keychain\nMoved 1 account(s)"), "\(out)")
        let keychain = out.components(separatedBy: "--- to keychain\n")[1].components(separatedBy: "--- to sqlite")[0]
        #expect(keychain.hasSuffix("969429\n338314\n"), "counters 3 and 4 on the keyring, never 0 again: \(keychain)")
        let back = out.components(separatedBy: "--- to sqlite\n")[1]
        #expect(back.hasPrefix("Moved 1 account(s)") && back.hasSuffix("254676\n"), "counter 5 back on SQLite: \(back)")
        ReliabilityReport.record("R13", "HOTP secret removed, trash emptied, migrated sqlite → keychain → sqlite, added again each time",
                                 tried: "3 re-adds", outcome: keychain.hasSuffix("969429\n338314\n") && back.hasSuffix("254676\n")
                                     ? "counters 3, 4, 5: none issued again" : "A CODE ISSUED AGAIN")
    }
}
