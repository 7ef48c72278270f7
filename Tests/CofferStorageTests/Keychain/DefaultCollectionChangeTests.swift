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
    static let countItems = TestKeyring.restartDaemon + """
        # SearchItems answers with locked items too, and never prompts.
        count() {
          gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \\
            --method org.freedesktop.Secret.Service.SearchItems "{'service': 'org.coffer.tests.stress', 'account': 'item'}" \\
            | grep -o '/org/freedesktop/secrets/collection/[a-z_0-9]*/[0-9]*' | wc -l
        }
        inSession() {
          dbus-send --session --dest=org.freedesktop.secrets --print-reply /org/freedesktop/secrets/collection/session \
            org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Items | grep -c 'object path'
        }
        setDefault() {
          dbus-send --session --dest=org.freedesktop.secrets --print-reply /org/freedesktop/secrets \\
            org.freedesktop.Secret.Service.SetAlias string:default objpath:/org/freedesktop/secrets/collection/$1 > /dev/null || exit 20
        }
        # A keyring "other" with the password "pw123", made and unlocked with no prompt.
        keyringCollection() { /usr/bin/python3 "\(TestKeyring.root.path)/Tests/Helpers/keyring-collection.py" "$@" > /dev/null || exit 21; }
        makeOther() { keyringCollection create other pw123; }
        unlockOther() { keyringCollection unlock /org/freedesktop/secrets/collection/other pw123; }
        # The value's one copy, written into "other" while it was the default.
        copyInOther() { makeOther; setDefault other; "$STRESS" keychain-write item 1 || exit 10; }
        lockOther() {
          gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \\
            --method org.freedesktop.Secret.Service.Lock "[objectpath '/org/freedesktop/secrets/collection/other']" > /dev/null
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

    // The attack review of the change (each test failed on its first version):

    @Test("the one copy in a keyring still locked as loaded from disk (gnome-keyring shows only hashed attributes): the save fails as locked, writes no second copy")
    func copyLockedFromDisk() async throws {
        let result = try await TestKeyring.runInOwnSession(Self.countItems + """

            copyInOther
            restartDaemon
            setDefault login
            "$STRESS" keychain-write item 1 2>&1; echo "write-status $?"
            echo "items $(count)"
            """, keyring: true)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("write-status 1") && lines.contains { $0.contains("locked") }, "\(lines) \(result.stderr)")
        #expect(lines.contains("items 1"), "a second copy was written beside the locked one: \(lines)")
    }

    @Test("the default moved back and forth while 4 processes save: still one copy, and it reads")
    func defaultMovingDuringSaves() async throws {
        let result = try await TestKeyring.runInOwnSession(Self.countItems + """

            "$STRESS" keychain-write item 1 || exit 10
            ( for _ in $(seq 1 100); do setDefault session; setDefault login; done ) &
            for _ in 1 2 3 4; do "$STRESS" keychain-write item 20 > /dev/null 2>&1 & done
            wait
            echo "items $(count)"
            "$STRESS" keychain-get item 5000; echo "get-status $?"
            """, keyring: true, deadline: .seconds(180))
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("items 1"), "\(lines) \(result.stderr)")
        #expect(lines.contains("get-status 0"), "\(lines)")
    }

    @Test("the one copy in gnome-keyring's in-memory session collection, login now the default: the save moves it into login, and it outlives the daemon")
    func copyInTheSessionCollection() async throws {
        let result = try await TestKeyring.runInOwnSession(Self.countItems + """

            setDefault session
            "$STRESS" keychain-write item 1 || exit 10
            setDefault login
            "$STRESS" keychain-write item 2 || exit 11
            echo "items $(count) in-session $(inSession)"
            restartDaemon
            echo "after-restart $(count)"
            "$STRESS" keychain-get item 5000; echo "get-status $?"
            """, keyring: true)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("items 1 in-session 0"), "\(lines) \(result.stderr)")
        #expect(lines.contains("after-restart 1") && lines.contains("ok"), "the value was lost with the daemon: \(lines)")
    }

    @Test("the old copy's keyring locked and unlocked while saves run: every failure is KeychainError.locked, never an untyped error; one copy")
    func lockRaceTyped() async throws {
        let result = try await TestKeyring.runInOwnSession(Self.countItems + """

            copyInOther
            setDefault login
            ( for _ in $(seq 1 60); do lockOther; unlockOther; done ) &
            for _ in $(seq 1 40); do "$STRESS" keychain-write item 1 2>&1; done
            wait
            echo "items $(count)"
            """, keyring: true, deadline: .seconds(180))
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(!lines.contains { $0.contains("secret-error") || $0.contains("Cannot set secret") }, "\(lines.filter { $0.contains("save") })")
        #expect(lines.contains("items 1"), "\(lines) \(result.stderr)")
    }
}
