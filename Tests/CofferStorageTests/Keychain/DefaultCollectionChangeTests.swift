import Foundation
import TestSupport
import Testing

/// The Secret Service replaces an item only in the collection a store is sent to, the default
/// one. When the default changes after an item was written (a user makes another keyring the
/// default), a store must change the item where it is, not leave it beside a new copy that
/// readers then find twice (`KeychainError.ambiguous`, or the push books refusing changes).
@Suite("Stores after the default collection changed", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct DefaultCollectionChangeTests {
    /// Counts the items holding the stress helper's value `item`, in every collection.
    static let countItems = """
        count() { secret-tool search --all service org.coffer.tests.stress account item 2>/dev/null | grep -c '^\\[' ; }
        inSession() {
          dbus-send --session --dest=org.freedesktop.secrets --print-reply /org/freedesktop/secrets/collection/session \
            org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Items | grep -c 'object path'
        }
        setDefault() {
          dbus-send --session --dest=org.freedesktop.secrets --print-reply /org/freedesktop/secrets \\
            org.freedesktop.Secret.Service.SetAlias string:default objpath:/org/freedesktop/secrets/collection/$1 > /dev/null || exit 20
        }
        """

    @Test("a value written before the default moved to another collection is changed in place: one item, read back, no 'ambiguous'")
    func storeFollowsTheItem() async throws {
        let result = try await TestKeyring.runInOwnSession(Self.countItems + """

            "$STRESS" keychain-write item 1 || exit 10
            echo "before $(count)"
            setDefault session
            "$STRESS" keychain-write item 2 || exit 11
            echo "after $(count)"
            "$STRESS" keychain-get item 5000; echo "get-status $?"
            echo "in-session $(inSession)"
            """, keyring: true)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("before 1"), "\(lines) \(result.stderr)")
        #expect(lines.contains("after 1"), "a second copy was written into the new default collection: \(lines)")
        #expect(lines.contains("ok") && lines.contains("get-status 0"), "the value does not read back: \(lines)")
        #expect(lines.contains("in-session 0"), "\(lines)")
    }

    @Test("the one copy in a locked collection: the store fails as locked and writes no second copy into the new default")
    func lockedCopyRefused() async throws {
        let result = try await TestKeyring.runInOwnSession(Self.countItems + """

            "$STRESS" keychain-write item 1 || exit 10
            "$STRESS" keychain-lock || exit 12
            setDefault session
            "$STRESS" keychain-write item 1 2>&1; echo "write-status $?"
            echo "in-session $(inSession)"
            """, keyring: true)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("write-status 1"), "\(lines) \(result.stderr)")
        #expect(lines.contains { $0.contains("locked") }, "\(lines)")
        #expect(lines.contains("in-session 0"), "nothing was written into the new default collection: \(lines)")
    }
}
