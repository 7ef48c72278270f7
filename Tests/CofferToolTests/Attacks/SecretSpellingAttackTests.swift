import Foundation
import TestSupport
import Testing

/// Issue 30, point 2 (the fourth attack review): `GEZDGNBVGY3TQOJQ` and `GEZDGNBVGY3TQOJQAA`
/// are one HMAC key, but the counter memory and the one-secret-one-account rule compared the
/// SHA-256 of the bytes as spelled: a second account with the padded spelling was accepted and
/// issued counter 0's code again, and so did the padded spelling re-added after the trash was
/// emptied.
@Suite("R13: one HOTP secret in two spellings")
struct SecretSpellingAttackTests {
    static let padded = TrashToolTests.secret + "AA"

    @Test("a second account with the zero-padded spelling is refused, and after remove and trash --empty it goes on from the counter")
    func paddedSpelling() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await TrashToolTests.run("""
            echo '\(TrashToolTests.hotp)' | "$COFFER" add - > /dev/null 2>&1 || exit 10
            "$COFFER" code bank --raw; "$COFFER" code bank --raw
            echo '--- twin'
            echo 'otpauth://hotp/Other:eve?secret=\(Self.padded)&issuer=Other&counter=0' | "$COFFER" add - 2>&1; echo "status=$?"
            echo '--- again'
            "$COFFER" remove bank --yes > /dev/null || exit 11
            "$COFFER" trash --empty > /dev/null || exit 12
            echo 'otpauth://hotp/Other:eve?secret=\(Self.padded)&issuer=Other&counter=0' | "$COFFER" add - > /dev/null 2>&1 || exit 13
            "$COFFER" code other --raw
            echo 'otpauth://hotp/Third:ann?secret=\(Self.padded.lowercased())AAAA&issuer=Third&counter=0' | "$COFFER" add - > /dev/null 2>&1
            echo "third=$?"
            """, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        #expect(out.hasPrefix("755224\n287082\n--- twin\ncoffer: Use the account Bank: bob"), "\(out)")
        #expect(out.contains("status=1\n--- again\n359152\n"), "no code of counters 0 and 1 is issued again: \(out)")
        #expect(out.hasSuffix("third=1\n"), "more padding, another case: still the same secret: \(out)")
        ReliabilityReport.record("R13", "a HOTP secret re-added or added twice with zero padding (GEZDGNBVGY3TQOJQ…AA)",
                                 tried: "twin, remove + trash --empty + re-add", outcome: "refused; counter went on from 2")
    }
}
