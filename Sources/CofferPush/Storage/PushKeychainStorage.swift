import CofferMFACommons
import CofferMFAEngine
import CofferStorage
import Foundation

/// ``PushStorage`` on the OS keyring (the freedesktop Secret Service), under Ping's service
/// names: one item per credential, one *book* per credential holding its notifications, and one
/// item for the current device token.
///
/// | item | `service` attribute | other attributes |
/// | --- | --- | --- |
/// | credential | `com.pingidentity.push.credentials` | `account` (its id) |
/// | a credential's notifications | `com.pingidentity.push.notifications` | `kind=notifications`, `credentialId` |
/// | device token | `com.pingidentity.push.tokens` | `account=current` |
///
/// Every item also carries `accessGroup` (empty without one). Each value is the record's JSON
/// sealed (AES-GCM, a key kept in the keyring under `<credential service>.key`) and bound to
/// its item, so the shared secret and the challenges are never in the keyring in the clear and
/// a value moved onto another item is refused.
///
/// Ping keeps one item per notification; Coffer keeps a book per credential, because the
/// Secret Service has no range queries and gnome-keyring rewrites its keyring file on every
/// change: at 1,000 notifications, listing the pending ones takes one item per credential to
/// read instead of 1,000, and a purge one item write instead of one per notification removed
/// (docs/performance.md, P10). Items of the one-per-notification layout that Coffer 0.3 wrote
/// are moved into books on first use (`NotificationBooks`). Better than Ping's:
/// - removing a credential (or all) removes its notifications too, under the keyring's lock;
/// - every write and every read-choose-delete (purges) holds the keyring's lock (`KeyringLock`,
///   named after the credential service), so processes never undo each other's writes and a
///   purge never takes a notification stored after it chose;
/// - every change of a credential's notifications is one item write, which is atomic;
/// - dates keep their fractions (Ping writes whole seconds, which makes ties in order common),
///   and ties are broken by id.
public final class PushKeychainStorage: PushStorage {
    /// The `service` attribute of credential items.
    public let credentialService: String
    /// The `service` attribute of the items holding notifications (one per credential).
    public let notificationService: String
    /// The `service` attribute of the device token item.
    public let tokenService: String
    /// Kept as given: each of Apple's values means "while the keyring is unlocked, on this
    /// machine only", except `kSecAttrAccessibleAlways…` and values that are not Apple's, which
    /// fail every call (`KeychainAccessibility`).
    public let accessibility: String
    /// The group whose items this storage sees.
    public let accessGroup: String?
    private let items: SealedKeyringItems
    private let logger: any CofferMFACommons.Logger
    private let books: NotificationBooks

    /// A storage under the given services; each keyring call may take up to 10 seconds.
    public convenience init(
        credentialService: String = "com.pingidentity.push.credentials",
        notificationService: String = "com.pingidentity.push.notifications",
        tokenService: String = "com.pingidentity.push.tokens",
        logger: (any CofferMFACommons.Logger)? = nil,
        accessGroup: String? = nil,
        accessibility: CFString = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
    ) {
        self.init(credentialService: credentialService, notificationService: notificationService, tokenService: tokenService,
                  logger: logger, accessGroup: accessGroup, accessibility: accessibility, timeout: SecretService.defaultTimeout)
    }

    /// A storage whose keyring calls may each take up to `timeout` (Coffer's addition), for
    /// keyrings that hold many items or answer slowly.
    public init(
        credentialService: String = "com.pingidentity.push.credentials",
        notificationService: String = "com.pingidentity.push.notifications",
        tokenService: String = "com.pingidentity.push.tokens",
        logger: (any CofferMFACommons.Logger)? = nil,
        accessGroup: String? = nil,
        accessibility: CFString = kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
        timeout: Duration
    ) {
        self.credentialService = credentialService
        self.notificationService = notificationService
        self.tokenService = tokenService
        self.accessibility = accessibility
        self.accessGroup = accessGroup
        let items = SealedKeyringItems(keyAlias: credentialService + ".key", lockName: credentialService, timeout: timeout)
        let logger = logger ?? LogManager.logger
        self.items = items
        self.logger = logger
        self.books = NotificationBooks(service: notificationService, accessGroup: accessGroup ?? "", items: items, logger: logger)
    }

    // MARK: - Credentials

    public func storePushCredential(_ credential: PushCredential) async throws {
        try await run("store credential") {
            try await items.exclusively { try await store(credential, service: credentialService, id: credential.id) }
        }
    }

    /// Every readable credential, newest first; one that cannot be read is logged and skipped.
    public func getAllPushCredentials() async throws -> [PushCredential] {
        try await run("retrieve credentials") {
            NotificationRules.newestFirst(try await readAll(PushCredential.self, service: credentialService))
        }
    }

    public func retrievePushCredential(credentialId: String) async throws -> PushCredential? {
        try await run("retrieve credential") { try await read(PushCredential.self, service: credentialService, id: credentialId) }
    }

    /// Removes the credential and its notifications, under the keyring's lock.
    public func removePushCredential(credentialId: String) async throws -> Bool {
        try await changeNotifications("remove credential") {
            _ = try await books.removeAll(of: credentialId)
            return try await items.keyring.clear(attributes(credentialService, id: credentialId)) > 0
        }
    }

    /// Removes every credential and every notification.
    public func clearPushCredentials() async throws {
        try await run("clear credentials") {
            try await items.exclusively {
                _ = try await items.keyring.clear(books.everything)
                _ = try await items.keyring.clear(attributes(credentialService))
            }
        }
    }

    // MARK: - Notifications

    /// Stores or replaces the notification with this id, in its credential's book (moving it
    /// out of another credential's book if it was there).
    public func storePushNotification(_ notification: PushNotification) async throws {
        try await changeNotifications("store notification") {
            let shelf = try await books.shelf()
            try NotificationBooks.checkChangeable(notification.credentialId, in: shelf)
            var book = shelf.book(of: notification.credentialId) ?? .init(credentialId: notification.credentialId, notifications: [])
            book.notifications.removeAll { $0.id.isSameStoredID(as: notification.id) }
            book.notifications.append(notification)
            try await books.write(book)
            // Then out of any other credential's book: a process stopped in between leaves a
            // second copy, which the next store of this id removes, never no copy at all.
            for var other in shelf.books.values where !other.credentialId.isSameStoredID(as: notification.credentialId) {
                guard other.notifications.contains(where: { $0.id.isSameStoredID(as: notification.id) }),
                      (try? NotificationBooks.checkChangeable(other.credentialId, in: shelf)) != nil else { continue }
                other.notifications.removeAll { $0.id.isSameStoredID(as: notification.id) }
                try await books.write(other)
            }
        }
    }

    public func updatePushNotification(_ notification: PushNotification) async throws {
        try await storePushNotification(notification)
    }

    public func getAllPushNotifications() async throws -> [PushNotification] {
        try await run("retrieve notifications") { NotificationRules.newestFirst(try await books.notifications()) }
    }

    public func getPendingPushNotifications() async throws -> [PushNotification] {
        try await run("retrieve notifications") { NotificationRules.pending(try await books.notifications()) }
    }

    public func retrievePushNotification(notificationId: String) async throws -> PushNotification? {
        try await run("retrieve notification") { try await books.notifications().first { $0.id.isSameStoredID(as: notificationId) } }
    }

    /// The newest with this message id; `nil` for a blank one.
    public func getNotificationByMessageId(messageId: String) async throws -> PushNotification? {
        guard !messageId.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return try await run("retrieve notification") {
            NotificationRules.newest(try await books.notifications(), messageId: messageId)
        }
    }

    public func removePushNotification(notificationId: String) async throws -> Bool {
        try await changeNotifications("remove notification") {
            try await remove { $0.filter { $0.id.isSameStoredID(as: notificationId) }.map(\.id) } > 0
        }
    }

    public func removePushNotificationsForCredential(credentialId: String) async throws -> Int {
        try await changeNotifications("remove notifications for credential") { try await books.removeAll(of: credentialId) }
    }

    public func clearPushNotifications() async throws {
        try await changeNotifications("clear notifications") {
            _ = try await items.keyring.clear(books.everything)
        }
    }

    // MARK: - Device token

    /// Makes `token` the current one (one item, `current`, replaced).
    public func storePushDeviceToken(_ token: PushDeviceToken) async throws {
        try await run("store device token") {
            try await items.exclusively { try await store(token, service: tokenService, id: "current") }
        }
    }

    public func getCurrentPushDeviceToken() async throws -> PushDeviceToken? {
        try await run("retrieve device token") { try await read(PushDeviceToken.self, service: tokenService, id: "current") }
    }

    public func clearPushDeviceTokens() async throws {
        try await run("clear device tokens") {
            try await items.exclusively { _ = try await items.keyring.clear(attributes(tokenService)) }
        }
    }

    // MARK: - Cleanup

    /// Counts the notifications of one book (or all books).
    public func countPushNotifications(credentialId: String?) async throws -> Int {
        try await run("count notifications") { NotificationRules.inScope(try await books.notifications(), credentialId).count }
    }

    public func getOldestPushNotifications(limit: Int, credentialId: String?) async throws -> [PushNotification] {
        try await run("retrieve oldest notifications") { NotificationRules.oldest(try await books.notifications(), limit: limit, credentialId) }
    }

    public func purgePushNotificationsByAge(maxAgeDays: Int, credentialId: String?) async throws -> Int {
        try await changeNotifications("purge notifications by age") {
            try await remove { NotificationRules.olderThan($0, maxAgeDays: maxAgeDays, credentialId) }
        }
    }

    public func purgePushNotificationsByCount(maxCount: Int, credentialId: String?) async throws -> Int {
        try await changeNotifications("purge notifications by count") {
            try await remove { NotificationRules.beyondCount($0, maxCount: maxCount, credentialId) }
        }
    }

    // MARK: - Items

    private func attributes(_ service: String, id: String? = nil) -> [String: String] {
        var attributes = ["service": service, "accessGroup": accessGroup ?? ""]
        attributes["account"] = id
        return attributes
    }

    private func field(_ service: String, _ id: String) -> String { "push/\(service)/\(id)" }

    private func store(_ value: some Encodable, service: String, id: String) async throws {
        let json = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        let sealed = try await items.seal(json, boundTo: field(service, id))
        try await items.keyring.store(sealed, attributes: attributes(service, id: id),
                                      label: "Coffer push record (\(service))", contentType: "application/octet-stream")
    }

    private func read<T: Decodable & Identifiable>(_ type: T.Type, service: String, id: String) async throws -> T? where T.ID == String {
        guard let item = try await items.single(attributes(service, id: id)) else { return nil }
        return try await open(type, item, service: service, id: id)
    }

    private func readAll<T: Decodable & Identifiable>(_ type: T.Type, service: String) async throws -> [T] where T.ID == String {
        var values: [T] = []
        for item in try await items.keyring.search(attributes(service), loadLabels: false) {
            let id = item.attributes["account"] ?? ""
            do { values.append(try await open(type, item, service: service, id: id)) } catch {
                logger.w("Skipped a push record that cannot be read (\(service) \(id))", error: error)
            }
        }
        return values
    }

    /// Opens an item: it must be unlocked, open under its own binding, and name its own id.
    private func open<T: Decodable & Identifiable>(_ type: T.Type, _ item: SecretService.Item, service: String, id: String) async throws -> T where T.ID == String {
        guard !item.isLocked else { throw KeychainError.locked }
        guard let sealed = item.secret else { throw PushStorageError.storageFailure("the item \(service) \(id) holds nothing", nil) }
        let json: String
        do { json = try await items.open(sealed, boundTo: field(service, id)) } catch is SealedKeyringItems.Misplaced {
            throw PushStorageError.storageFailure("the item \(service) \(id) holds another record's value", nil)
        }
        let value = try JSONDecoder().decode(type, from: Data(json.utf8))
        guard service == tokenService || value.id.isSameStoredID(as: id) else {
            throw PushStorageError.storageFailure("the item \(service) \(id) holds the record \(value.id)", nil)
        }
        return value
    }

    /// Runs a change of the notifications under the keyring lock (after any move of the older
    /// layout, which takes the lock itself).
    private func changeNotifications<R>(_ operation: String, _ body: () async throws -> R) async throws -> R {
        try await run(operation) {
            try await books.ensureLayout()
            return try await items.exclusively { try await body() }
        }
    }

    /// Chooses notifications from the current books and rewrites the books they are in, so a
    /// notification stored meanwhile is neither chosen from a stale list nor lost. A damaged
    /// book is left as it is (logged): nothing in it can be chosen. Call inside the keyring lock.
    private func remove(_ choose: ([PushNotification]) -> [String]) async throws -> Int {
        let shelf = try await books.shelf()
        for (credentialId, error) in shelf.damaged {
            logger.w("Left push notifications that cannot be read (\(notificationService), credential \(credentialId.text))", error: error)
        }
        let chosen = Set(choose(shelf.books.values.flatMap(\.notifications)).map(\.storedID))
        var removed = 0
        for var book in shelf.books.values.sorted(by: { $0.credentialId.storedID < $1.credentialId.storedID }) {
            let before = book.notifications.count
            book.notifications.removeAll { chosen.contains($0.id.storedID) }
            guard book.notifications.count < before else { continue }
            try NotificationBooks.checkChangeable(book.credentialId, in: shelf)
            try await books.write(book)
            removed += before - book.notifications.count
        }
        return removed
    }

    /// Runs `body`; failures become ``PushStorageError/storageFailure(_:_:)`` naming the
    /// operation, as Ping's do. An ``accessibility`` the keyring cannot honour fails every call
    /// (its cause a `KeychainAccessibilityError`).
    private func run<R>(_ operation: String, _ body: () async throws -> R) async throws -> R {
        do {
            try KeychainAccessibility.check(accessibility)
            return try await body()
        } catch {
            throw PushStorageError.storageFailure("Failed to \(operation)", error)
        }
    }
}
