@testable import CofferMFAEngine
import CofferPush
import CofferStorage
import CofferStorageTesting
import CofferAuthenticatorTesting
import Foundation
import TestSupport
import Testing

@Suite("PushKeychainStorage on a real gnome-keyring", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct PushKeychainStorageTests {
    static func storage(_ prefix: String = prefix()) -> PushKeychainStorage {
        PushKeychainStorage(credentialService: prefix + ".credentials", notificationService: prefix + ".notifications",
                                   tokenService: prefix + ".tokens", timeout: .seconds(60))  // the suite shares one keyring
    }

    static func prefix() -> String { "org.coffer.tests.push.\(UUID().uuidString.prefix(8))" }

    /// One instant the notifications' times are counted from: on a loaded machine a store can
    /// take longer than a minute, and "one minute ago" taken at each call would not order them.
    static let now = Date()

    static func notification(_ id: String, of credentialId: String, minutesAgo: Double = 0, seconds: Double = 0, pending: Bool = true) -> PushNotification {
        PushNotification(id: id, credentialId: credentialId, ttl: 120, messageId: "message-" + id, challenge: "c2VjcmV0LWNoYWxsZW5nZS0" + id,
                         pushType: .challenge, createdAt: now.addingTimeInterval(seconds - minutesAgo * 60), pending: pending)
    }

    /// Writes notifications as Coffer 0.3 kept them: one sealed item each, bound to `push/<service>/<id>`.
    static func writeOldLayout(_ prefix: String, _ notifications: [PushNotification], unreadable: String? = nil) async throws {
        let items = SealedKeyringItems(keyAlias: prefix + ".credentials.key", lockName: prefix + ".credentials", timeout: .seconds(60))
        func attributes(_ id: String, _ credentialId: String) -> [String: String] {
            ["service": prefix + ".notifications", "accessGroup": "", "account": id, "credentialId": credentialId, "messageId": "message-" + id]
        }
        for notification in notifications {
            let json = String(decoding: try JSONEncoder().encode(notification), as: UTF8.self)
            let sealed = try await items.seal(json, boundTo: "push/\(prefix).notifications/\(notification.id)")
            try await items.keyring.store(sealed, attributes: attributes(notification.id, notification.credentialId), label: "old",
                                          contentType: "application/octet-stream")
        }
        if let unreadable {
            try await items.keyring.store(Data("not sealed".utf8), attributes: attributes(unreadable, "c0"), label: "old", contentType: "text/plain")
        }
    }

    static func oldLayoutSet() -> [PushNotification] {
        (0..<3).flatMap { credential in (0..<4).map { notification("n\(credential)-\($0)", of: "c\(credential)", minutesAgo: Double($0)) } }
    }

    @Test("a credential's notifications are one sealed item: 3 stored, one item, no challenge in the clear; a purge and a removal rewrite it")
    func oneItemPerCredential() async throws {
        let prefix = Self.prefix()
        let storage = Self.storage(prefix)
        for index in 0..<3 { try await storage.storePushNotification(Self.notification("a\(index)", of: "alice", minutesAgo: Double(index))) }
        try await storage.storePushNotification(Self.notification("b0", of: "bob", seconds: 1))
        let keyring = SecretService()
        let books = try await keyring.search(["service": prefix + ".notifications", "kind": "notifications"])
        #expect(books.map { $0.attributes["credentialId"] ?? "" }.sorted() == ["alice", "bob"])
        #expect(books.allSatisfy { !String(decoding: $0.secret ?? Data(), as: UTF8.self).contains("c2VjcmV0") }, "challenges sealed")
        #expect(try await storage.purgePushNotificationsByCount(maxCount: 1, credentialId: "alice") == 2)
        let left = try await storage.getAllPushNotifications()
        #expect(left.map(\.id) == ["b0", "a0"], "\(left.map { "\($0.id) \($0.createdAt.timeIntervalSinceReferenceDate)" })")
        #expect(try await storage.removePushNotification(notificationId: "b0"))
        #expect(try await keyring.count(["service": prefix + ".notifications", "kind": "notifications"]) == 1, "an empty book is removed")
        // A notification stored again under another credential moves: one copy, in the new book.
        try await storage.storePushNotification(Self.notification("a0", of: "carol"))
        let moved = try await storage.getAllPushNotifications()
        #expect(moved.map(\.credentialId) == ["carol"], "\(moved.map { "\($0.id) of \($0.credentialId)" })")
        try await storage.clearPushNotifications()
        #expect(try await keyring.count(["service": prefix + ".notifications"]) == 0)
    }

    @Test("notifications kept one item each (Coffer 0.3) are moved into books on first use; one that cannot be opened is left, not lost")
    func movesTheOlderLayout() async throws {
        let prefix = Self.prefix()
        try await Self.writeOldLayout(prefix, Self.oldLayoutSet(), unreadable: "bad")
        let storage = Self.storage(prefix)
        #expect(try await storage.getAllPushNotifications().map(\.id).sorted() == Self.oldLayoutSet().map(\.id).sorted())
        let keyring = SecretService()
        let left = try await keyring.search(["service": prefix + ".notifications"], loadSecrets: false)
        #expect(left.filter { $0.attributes["kind"] == nil }.map { $0.attributes["account"] ?? "" } == ["bad"], "only the unreadable one stays")
        #expect(left.filter { $0.attributes["kind"] == "notifications" }.count == 3)
        #expect(try await storage.countPushNotifications(credentialId: "c1") == 4)
        // Removing the credential's notifications removes what was left of the older layout too.
        #expect(try await storage.removePushNotificationsForCredential(credentialId: "c0") == 5)
        #expect(try await keyring.count(["service": prefix + ".notifications", "account": "bad"]) == 0)
        try await storage.clearPushNotifications()
    }

    @Test("the move keeps ids apart byte for byte: notifications and credentials whose ids differ only in normalisation all arrive, each in its own book")
    func movesIdsByBytes() async throws {
        let prefix = Self.prefix()
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        let old = [Self.notification(composed, of: composed, minutesAgo: 3), Self.notification(decomposed, of: composed, minutesAgo: 2),
                   Self.notification("other", of: decomposed, minutesAgo: 1)]
        try await Self.writeOldLayout(prefix, old)
        let storage = Self.storage(prefix)
        // Swift's `==` takes the two ids for one: the move kept the first and deleted both items.
        let moved = try await storage.getAllPushNotifications()
        #expect(moved.map(\.messageId) == ["message-other", "message-" + decomposed, "message-" + composed])
        #expect(try await storage.countPushNotifications(credentialId: composed) == 2)
        #expect(try await storage.countPushNotifications(credentialId: decomposed) == 1)
        let keyring = SecretService()
        let left = try await keyring.search(["service": prefix + ".notifications"], loadSecrets: false)
        #expect(left.filter { $0.attributes["kind"] == nil }.isEmpty, "every old item moved and removed")
        #expect(Set(left.filter { $0.attributes["kind"] == "notifications" }.map { Array(($0.attributes["credentialId"] ?? "").utf8) })
                    == [Array(composed.utf8), Array(decomposed.utf8)], "one book per credential id, by bytes")
        try await storage.clearPushNotifications()
    }

    @Test("a process killed before any keyring write of the move (16 of them) loses nothing and leaves no copy behind")
    func killedDuringTheMove() async throws {
        let stress = try CofferProcess.builtExecutable("coffer-stress")
        let expected = Self.oldLayoutSet().map(\.id).sorted()
        for killAt in 1...17 {
            let prefix = Self.prefix()
            try await Self.writeOldLayout(prefix, Self.oldLayoutSet())
            let run = try await CofferProcess.run(executable: stress, ["push-keychain-read", prefix, String(killAt)])
            if killAt <= 16 {
                #expect(run.status == 128 + SIGKILL, "killed at write \(killAt): \(run.status) \(run.stderr)")
            } else {
                #expect(run.status == 0 && run.stdout == "12\n", "the move makes 16 writes; \(run.stdout) \(run.stderr)")
            }
            let storage = Self.storage(prefix)
            #expect(try await storage.getAllPushNotifications().map(\.id).sorted() == expected, "after a kill at write \(killAt)")
            let items = try await SecretService().search(["service": prefix + ".notifications"], loadSecrets: false)
            #expect(items.allSatisfy { $0.attributes["kind"] != nil }, "nothing old left, after a kill at write \(killAt)")
            #expect(items.filter { $0.attributes["kind"] == "notifications" }.count == 3, "3 books, after a kill at write \(killAt)")
            try await storage.clearPushNotifications()
        }
    }

    @Test("a notification moved to another credential, the process killed before each keyring write: never in no book")
    func killedDuringAMove() async throws {
        let stress = try CofferProcess.builtExecutable("coffer-stress")
        for killAt in 1...3 {
            let prefix = Self.prefix()
            let storage = Self.storage(prefix)
            try await storage.storePushNotification(Self.notification("x", of: "alice"))
            try await storage.storePushNotification(Self.notification("y", of: "alice"))
            let run = try await CofferProcess.run(executable: stress, ["push-keychain-move", prefix, "x", "bob", String(killAt)])
            #expect(run.status == (killAt <= 2 ? 128 + SIGKILL : 0), "kill at write \(killAt): \(run.stderr)")
            let holders = try await storage.getAllPushNotifications().filter { $0.id == "x" }.map(\.credentialId).sorted()
            let expected = switch killAt { case 1: ["alice"]; case 2: ["alice", "bob"]; default: ["bob"] }
            #expect(holders == expected, "kill at write \(killAt)")
            // The next store of the id leaves one copy.
            try await storage.storePushNotification(Self.notification("x", of: "bob"))
            #expect(try await storage.getAllPushNotifications().filter { $0.id == "x" }.map(\.credentialId) == ["bob"])
            try await storage.clearPushNotifications()
        }
    }

    @Test("4 processes × 25 notifications into one credential's item at once: all 100 kept (the keyring lock)")
    func fourProcesses() async throws {
        let prefix = Self.prefix()
        let run = try await CofferProcess.stressAtOnce(["push-keychain-store", prefix, "shared", "25"])
        #expect(run.allSucceeded, "\(run.failures)")
        let storage = Self.storage(prefix)
        #expect(try await storage.countPushNotifications(credentialId: "shared") == 100)
        #expect(Set(try await storage.getAllPushNotifications().map(\.id)).count == 100)
        try await storage.clearPushNotifications()
    }

    @Test("an item of notifications that cannot be opened: listings skip it, a store into it fails rather than replace it, other credentials go on")
    func unreadableItem() async throws {
        let prefix = Self.prefix()
        let storage = Self.storage(prefix)
        try await storage.storePushNotification(Self.notification("a0", of: "alice"))
        try await storage.storePushNotification(Self.notification("b0", of: "bob"))
        let keyring = SecretService()
        let attributes = ["service": prefix + ".notifications", "accessGroup": "", "kind": "notifications", "credentialId": "alice"]
        let bob = try await keyring.search(attributes.merging(["credentialId": "bob"]) { $1 })
        try await keyring.store(bob[0].secret!, attributes: attributes, label: "moved", contentType: "application/octet-stream")
        #expect(try await storage.getAllPushNotifications().map(\.id) == ["b0"], "bob's value under alice's attributes does not open")
        await #expect(throws: PushStorageError.self) { try await storage.storePushNotification(Self.notification("a1", of: "alice")) }
        #expect(try await keyring.search(attributes).first?.secret == bob[0].secret, "left as it was")
        // Other credentials go on: a store for bob, and a purge that takes what it can read.
        try await storage.storePushNotification(Self.notification("b1", of: "bob"))
        #expect(try await storage.purgePushNotificationsByCount(maxCount: 0, credentialId: nil) == 2)
        #expect(try await keyring.search(attributes).first?.secret == bob[0].secret, "the damaged item is left as it was")
        try await storage.clearPushNotifications()
    }

    @Test("conforms, cascade included")
    func conforms() async throws {
        try await PushStorageConformance(makeStorage: { Self.storage() }).run()
    }

    @Test("values are sealed (no secret or challenge in the keyring in the clear) and a value moved to another item is refused")
    func sealedAndBound() async throws {
        let storage = Self.storage()
        let secret = "b3VyIHNoYXJlZCBzZWNyZXQgb2YgMzIgYnl0ZXMhIQ=="
        for id in ["a", "b"] {
            try await storage.storePushCredential(PushCredential(id: id, issuer: "I", accountName: id, serverEndpoint: "https://x", sharedSecret: secret))
        }
        let keyring = SecretService()
        let items = try await keyring.search(["service": storage.credentialService])
        #expect(items.count == 2 && items.allSatisfy { !String(decoding: $0.secret ?? Data(), as: UTF8.self).contains(secret) })
        let itemOfB = items.first { $0.attributes["account"] == "b" }!
        try await keyring.store(itemOfB.secret!, attributes: itemOfB.attributes.merging(["account": "a"]) { $1 }, label: "moved",
                                contentType: "application/octet-stream")
        await #expect(throws: PushStorageError.self) { try await storage.retrievePushCredential(credentialId: "a") }
        #expect(try await storage.getAllPushCredentials().map(\.id) == ["b"])
        try await storage.clearPushCredentials()
    }
}
