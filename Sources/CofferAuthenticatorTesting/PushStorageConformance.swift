import CofferStorageTesting
import CofferPush
import Foundation

/// A conformance suite for `PushStorage` implementations (Ping's Push module's storage
/// protocol): the behaviours Ping's client relies on (reference §9), plus Coffer's promises for
/// its own storages (``checkCascade()``). Run it against yours:
///
/// ```swift
/// @Test func myPushStorageConforms() async throws {
///     try await PushStorageConformance(makeStorage: { MyPushStorage() }).run()
/// }
/// ```
///
/// The factory must return an empty storage that shares nothing with the others it makes.
public struct PushStorageConformance: Sendable {
    /// Makes a fresh, empty storage.
    public let makeStorage: @Sendable () async throws -> any PushStorage
    /// Whether to check that removing a credential removes its notifications (Coffer's
    /// storages do; Ping's keychain storage does not).
    public let expectsCascade: Bool

    /// Creates the suite.
    public init(expectsCascade: Bool = true, makeStorage: @escaping @Sendable () async throws -> any PushStorage) {
        self.makeStorage = makeStorage
        self.expectsCascade = expectsCascade
    }

    /// Every check, in order. Stops at the first failure; each check clears what it stored.
    public func run() async throws {
        try await checkEmpty()
        try await checkCredentials()
        try await checkNotifications()
        try await checkIdsByBytes()
        try await checkDeviceToken()
        try await checkPurges()
        if expectsCascade { try await checkCascade() }
        try await checkSecretsNotShown()
        try await checkConcurrentWriters()
    }

    static let secret = "b3VyIHNoYXJlZCBzZWNyZXQgb2YgMzIgYnl0ZXMhIQ=="
    static let challenge = "Y2hhbGxlbmdlIHRoYXQgbXVzdCBub3QgbGVhaw=="
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    func credential(_ id: String, at offset: TimeInterval = 0) -> PushCredential {
        PushCredential(
            id: id, userId: "user-\(id)", resourceId: "resource-\(id)", issuer: "Issuer", displayIssuer: "Shown",
            accountName: "alice-\(id)", displayAccountName: "Alice", serverEndpoint: "https://am.example.com/push/sns/message",
            sharedSecret: Self.secret, createdAt: start.addingTimeInterval(offset), imageURL: "https://example.com/logo.png",
            backgroundColor: "#112233", policies: "{}")
    }

    func notification(_ id: String, credential: String, age: TimeInterval, messageId: String? = nil, pending: Bool = true, ttl: Int = 120) -> PushNotification {
        PushNotification(
            id: id, credentialId: credential, ttl: ttl, messageId: messageId ?? "message-\(id)", messageText: "Sign in?",
            challenge: Self.challenge, numbersChallenge: "12,34,56", loadBalancer: "amlb=1", contextInfo: "{}",
            pushType: .challenge, createdAt: Date().addingTimeInterval(-age), sentAt: start, pending: pending)
    }

    /// A fresh storage is empty; missing ids read as `nil`, remove as `false`; clears succeed.
    public func checkEmpty() async throws {
        let storage = try await makeStorage()
        try expect(try await storage.getAllPushCredentials().isEmpty, "empty", "a fresh storage lists credentials")
        try expect(try await storage.getAllPushNotifications().isEmpty, "empty", "a fresh storage lists notifications")
        try expect(try await storage.getCurrentPushDeviceToken() == nil, "empty", "a fresh storage has a device token")
        try expect(try await storage.removePushCredential(credentialId: "nope") == false, "empty", "removing a missing credential answered true")
        try expect(try await storage.removePushNotification(notificationId: "nope") == false, "empty", "removing a missing notification answered true")
        try expect(try await storage.countPushNotifications(credentialId: nil) == 0, "empty", "a fresh storage counts notifications")
        try await storage.clearPushCredentials()
        try await storage.clearPushNotifications()
        try await storage.clearPushDeviceTokens()
    }

    /// Credentials round-trip with their secret, upsert by id, and are removed.
    public func checkCredentials() async throws {
        let storage = try await makeStorage()
        var stored = credential("c1")
        try await storage.storePushCredential(stored)
        let read = try await storage.retrievePushCredential(credentialId: "c1")
        try expect(read.map { Self.same($0, stored) } == true, "credentials", "the credential read back differs from the one stored")
        stored.lockCredential(policyName: "deviceTampering")
        try await storage.storePushCredential(stored)
        let all = try await storage.getAllPushCredentials()
        try expect(all.count == 1 && all.first.map { Self.same($0, stored) } == true, "credentials", "storing an id again did not replace it")
        try expect(try await storage.removePushCredential(credentialId: "c1"), "credentials", "removing a stored credential answered false")
        try expect(try await storage.getAllPushCredentials().isEmpty, "credentials", "a removed credential is still listed")
        try await storage.clearPushCredentials()
    }

    /// Notifications: newest first, pending excludes answered and expired, found by message id,
    /// upserted by id, counted and removed per credential.
    public func checkNotifications() async throws {
        let storage = try await makeStorage()
        try await storage.storePushCredential(credential("a"))
        try await storage.storePushCredential(credential("b"))
        try await storage.storePushNotification(notification("old", credential: "a", age: 50))
        try await storage.storePushNotification(notification("new", credential: "a", age: 10))
        try await storage.storePushNotification(notification("expired", credential: "b", age: 500, ttl: 60))
        try await storage.storePushNotification(notification("answered", credential: "b", age: 5, pending: false))
        let all = try await storage.getAllPushNotifications().map(\.id)
        try expect(all == ["answered", "new", "old", "expired"], "notifications", "not newest first: \(all)")
        let pending = try await storage.getPendingPushNotifications().map(\.id)
        try expect(pending == ["new", "old"], "notifications", "pending should be the unanswered, unexpired ones, newest first: \(pending)")
        try expect(try await storage.getNotificationByMessageId(messageId: "message-new")?.id == "new", "notifications", "not found by message id")
        try expect(try await storage.getNotificationByMessageId(messageId: "absent") == nil, "notifications", "an absent message id was found")
        var answered = try await storage.retrievePushNotification(notificationId: "new")
        answered?.markApproved()
        if let answered { try await storage.updatePushNotification(answered) }
        let updated = try await storage.retrievePushNotification(notificationId: "new")
        try expect(updated?.approved == true && updated?.pending == false && updated?.challenge == Self.challenge, "notifications", "an update did not replace the notification")
        try expect(try await storage.countPushNotifications(credentialId: nil) == 4, "notifications", "count of all is not 4")
        try expect(try await storage.countPushNotifications(credentialId: "a") == 2, "notifications", "count of one credential is not 2")
        try expect(try await storage.getOldestPushNotifications(limit: 2, credentialId: nil).map(\.id) == ["expired", "old"], "notifications", "oldest are not oldest first")
        try expect(try await storage.getOldestPushNotifications(limit: 0, credentialId: nil).isEmpty, "notifications", "a limit of 0 returned notifications")
        try expect(try await storage.removePushNotificationsForCredential(credentialId: "b") == 2, "notifications", "removing one credential's notifications did not answer 2")
        try expect(try await storage.removePushNotification(notificationId: "old"), "notifications", "removing a stored notification answered false")
        try expect(try await storage.getAllPushNotifications().map(\.id) == ["new"], "notifications", "removals took the wrong notifications")
        try await storage.clearPushNotifications()
        try expect(try await storage.getAllPushNotifications().isEmpty, "notifications", "clear left notifications")
        try await storage.clearPushCredentials()
    }

    /// Ids that differ only in Unicode normalisation ("é" as one code point, and "e" with a
    /// combining accent) are two records, as SQLite and the keyring tell them apart: two
    /// credentials, two notifications, each found, counted and removed on its own.
    public func checkIdsByBytes() async throws {
        let storage = try await makeStorage()
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        try await storage.storePushCredential(credential(composed))
        try await storage.storePushCredential(credential(decomposed, at: 1))
        let credentials = try await storage.getAllPushCredentials().map(\.userId)
        try expect(credentials == ["user-\(decomposed)", "user-\(composed)"], "idsByBytes", "two credential ids that differ in normalisation are not two credentials")
        try await storage.storePushNotification(notification(composed, credential: composed, age: 20, messageId: "m-\(composed)"))
        try await storage.storePushNotification(notification(decomposed, credential: composed, age: 10, messageId: "m-\(decomposed)"))
        try await storage.storePushNotification(notification("other", credential: decomposed, age: 5))
        let all = try await storage.getAllPushNotifications().map(\.messageId)
        try expect(all == ["message-other", "m-\(decomposed)", "m-\(composed)"], "idsByBytes", "two notification ids that differ in normalisation are not two notifications")
        try expect(try await storage.retrievePushNotification(notificationId: composed)?.messageId == "m-\(composed)", "idsByBytes", "the composed id reads another notification")
        try expect(try await storage.getNotificationByMessageId(messageId: "m-\(decomposed)")?.messageId == "m-\(decomposed)", "idsByBytes", "a message id finds another notification")
        try expect(try await storage.countPushNotifications(credentialId: composed) == 2, "idsByBytes", "a credential's count takes in another credential's notifications")
        try expect(try await storage.countPushNotifications(credentialId: decomposed) == 1, "idsByBytes", "a credential's count takes in another credential's notifications")
        try expect(try await storage.removePushNotification(notificationId: decomposed), "idsByBytes", "removing the decomposed notification answered false")
        let left = try await storage.getAllPushNotifications().map(\.messageId)
        try expect(left == ["message-other", "m-\(composed)"], "idsByBytes", "removing one of two notification ids removed the other too")
        try expect(try await storage.removePushNotificationsForCredential(credentialId: decomposed) == 1, "idsByBytes", "removing a credential's notifications took another's")
        try expect(try await storage.getAllPushNotifications().map(\.messageId) == ["m-\(composed)"], "idsByBytes", "removing a credential's notifications took another's")
        try await storage.clearPushNotifications()
        try await storage.clearPushCredentials()
    }

    /// One current device token: a new one replaces it; clear removes it.
    public func checkDeviceToken() async throws {
        let storage = try await makeStorage()
        try await storage.storePushDeviceToken(PushDeviceToken(token: "first"))
        try await storage.storePushDeviceToken(PushDeviceToken(token: "second"))
        try expect(try await storage.getCurrentPushDeviceToken()?.token == "second", "deviceToken", "the newest token is not current")
        try await storage.clearPushDeviceTokens()
        try expect(try await storage.getCurrentPushDeviceToken() == nil, "deviceToken", "clear left a token")
    }

    /// The count purge keeps the newest, pending or not; the age purge takes the strictly
    /// older; a negative count deletes nothing.
    public func checkPurges() async throws {
        let storage = try await makeStorage()
        try await storage.storePushCredential(credential("a"))
        for index in 0..<5 { try await storage.storePushNotification(notification("a\(index)", credential: "a", age: Double(index) * 86_400 + 60)) }
        try await storage.storePushNotification(notification("b0", credential: "b", age: 10 * 86_400))
        try expect(try await storage.purgePushNotificationsByCount(maxCount: -1, credentialId: nil) == 0, "purges", "a negative count purged")
        try expect(try await storage.purgePushNotificationsByCount(maxCount: 3, credentialId: "a") == 2, "purges", "the count purge of one credential did not take 2")
        try expect(try await storage.getAllPushNotifications().map(\.id) == ["a0", "a1", "a2", "b0"], "purges", "the count purge took the wrong ones")
        try expect(try await storage.purgePushNotificationsByAge(maxAgeDays: 2, credentialId: nil) == 1 + 1, "purges", "the age purge did not take a2 and b0")
        try expect(try await storage.getAllPushNotifications().map(\.id) == ["a0", "a1"], "purges", "the age purge took the wrong ones")
        try await storage.clearPushCredentials()
        try await storage.clearPushNotifications()
    }

    /// Removing a credential removes its notifications, and clearing credentials clears them all.
    public func checkCascade() async throws {
        let storage = try await makeStorage()
        try await storage.storePushCredential(credential("a"))
        try await storage.storePushCredential(credential("b"))
        try await storage.storePushNotification(notification("na", credential: "a", age: 1))
        try await storage.storePushNotification(notification("nb", credential: "b", age: 1))
        _ = try await storage.removePushCredential(credentialId: "a")
        try expect(try await storage.getAllPushNotifications().map(\.id) == ["nb"], "cascade", "removing a credential left its notifications")
        try await storage.clearPushCredentials()
        try expect(try await storage.getAllPushNotifications().isEmpty, "cascade", "clearing credentials left notifications")
    }

    /// The shared secret and challenge never appear in `description`, `dump` or interpolation.
    public func checkSecretsNotShown() async throws {
        let storage = try await makeStorage()
        try await storage.storePushCredential(credential("shown"))
        try await storage.storePushNotification(notification("shown", credential: "shown", age: 1))
        guard let credential = try await storage.retrievePushCredential(credentialId: "shown"),
              let notification = try await storage.retrievePushNotification(notificationId: "shown") else {
            throw ConformanceFailure(check: "noLeak", message: "stored records are not found")
        }
        var dumped = ""
        dump(credential, to: &dumped)
        dump(notification, to: &dumped)
        for text in [dumped, credential.description, notification.description, "\(credential)", "\(notification)"] {
            try expect(!text.contains(Self.secret) && !text.contains(Self.challenge), "noLeak", "a secret or challenge is shown")
        }
        try await storage.clearPushCredentials()
        try await storage.clearPushNotifications()
    }

    /// Eight tasks storing 25 notifications each at once lose none.
    public func checkConcurrentWriters() async throws {
        let storage = try await makeStorage()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<25 { try await storage.storePushNotification(notification("t\(task)-\(index)", credential: "c", age: 1)) }
                }
            }
            try await group.waitForAll()
        }
        let count = try await storage.countPushNotifications(credentialId: "c")
        try expect(count == 200, "concurrentWriters", "\(200 - count) of 200 notifications stored at once were lost")
        try await storage.clearPushNotifications()
    }

    /// Every property of the two credentials is equal (credentials are not `Equatable`, as in Ping).
    public static func same(_ a: PushCredential, _ b: PushCredential) -> Bool {
        a.id == b.id && a.userId == b.userId && a.resourceId == b.resourceId && a.issuer == b.issuer && a.displayIssuer == b.displayIssuer
            && a.accountName == b.accountName && a.displayAccountName == b.displayAccountName && a.serverEndpoint == b.serverEndpoint
            && a.secret == b.secret && abs(a.createdAt.timeIntervalSince(b.createdAt)) < 0.001 && a.imageURL == b.imageURL
            && a.backgroundColor == b.backgroundColor && a.policies == b.policies && a.lockingPolicy == b.lockingPolicy
            && a.isLocked == b.isLocked && a.platform == b.platform
    }

    private func expect(_ condition: Bool, _ check: String, _ message: @autoclosure () -> String) throws {
        if !condition { throw ConformanceFailure(check: check, message: message()) }
    }
}
