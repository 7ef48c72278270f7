import CofferMFACommons
import CofferMFAEngine
import CofferStorage
import Foundation

/// ``PushStorage`` on the OS keyring (the freedesktop Secret Service), in the layout of Ping's
/// `PushKeychainStorage`: one item per credential, per notification, and one for the current
/// device token.
///
/// | item | `service` attribute | `account` attribute | other attributes |
/// | --- | --- | --- | --- |
/// | credential | `com.pingidentity.push.credentials` | its id | — |
/// | notification | `com.pingidentity.push.notifications` | its id | `credentialId`, `messageId` |
/// | device token | `com.pingidentity.push.tokens` | `current` | — |
///
/// Every item also carries `accessGroup` (empty without one). Each value is the record's JSON
/// sealed (AES-GCM, a key kept in the keyring under `<credential service>.key`) and bound to
/// its item, so the shared secret and the challenges are never in the keyring in the clear and
/// a value moved onto another item is refused. Better than Ping's:
/// - removing a credential (or all) removes its notifications too, under the keyring's lock;
/// - every write and every read-choose-delete (purges) holds the keyring's lock (`KeyringLock`,
///   named after the credential service), so processes never undo each other's writes and a
///   purge never takes a notification stored after it chose;
/// - dates keep their fractions (Ping writes whole seconds, which makes ties in order common),
///   and ties are broken by id.
public final class PushKeychainStorage: PushStorage {
    /// The `service` attribute of credential items.
    public let credentialService: String
    /// The `service` attribute of notification items.
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
                  logger: logger, accessGroup: accessGroup, accessibility: accessibility, timeout: .seconds(10))
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
        self.items = SealedKeyringItems(keyAlias: credentialService + ".key", lockName: credentialService, timeout: timeout)
        self.logger = logger ?? LogManager.logger
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
            try await readAll(PushCredential.self, service: credentialService).sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        }
    }

    public func retrievePushCredential(credentialId: String) async throws -> PushCredential? {
        try await run("retrieve credential") { try await read(PushCredential.self, service: credentialService, id: credentialId) }
    }

    /// Removes the credential and its notifications, under the keyring's lock.
    public func removePushCredential(credentialId: String) async throws -> Bool {
        try await run("remove credential") {
            try await items.exclusively {
                try await items.keyring.clear(attributes(notificationService, extra: ["credentialId": credentialId]))
                return try await items.keyring.clear(attributes(credentialService, id: credentialId)) > 0
            }
        }
    }

    /// Removes every credential and every notification.
    public func clearPushCredentials() async throws {
        try await run("clear credentials") {
            try await items.exclusively {
                try await items.keyring.clear(attributes(notificationService))
                try await items.keyring.clear(attributes(credentialService))
            }
        }
    }

    // MARK: - Notifications

    public func storePushNotification(_ notification: PushNotification) async throws {
        try await run("store notification") {
            try await items.exclusively {
                try await store(notification, service: notificationService, id: notification.id,
                                extra: ["credentialId": notification.credentialId, "messageId": notification.messageId])
            }
        }
    }

    public func updatePushNotification(_ notification: PushNotification) async throws {
        try await storePushNotification(notification)
    }

    public func getAllPushNotifications() async throws -> [PushNotification] {
        try await run("retrieve notifications") { NotificationRules.newestFirst(try await notifications()) }
    }

    public func getPendingPushNotifications() async throws -> [PushNotification] {
        try await run("retrieve notifications") { NotificationRules.pending(try await notifications()) }
    }

    public func retrievePushNotification(notificationId: String) async throws -> PushNotification? {
        try await run("retrieve notification") { try await read(PushNotification.self, service: notificationService, id: notificationId) }
    }

    /// The newest with this message id; `nil` for a blank one.
    public func getNotificationByMessageId(messageId: String) async throws -> PushNotification? {
        guard !messageId.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return try await run("retrieve notification") {
            NotificationRules.newestFirst(try await notifications(["messageId": messageId])).first
        }
    }

    public func removePushNotification(notificationId: String) async throws -> Bool {
        try await run("remove notification") {
            try await items.exclusively { try await items.keyring.clear(attributes(notificationService, id: notificationId)) > 0 }
        }
    }

    public func removePushNotificationsForCredential(credentialId: String) async throws -> Int {
        try await run("remove notifications for credential") {
            try await items.exclusively { try await items.keyring.clear(attributes(notificationService, extra: ["credentialId": credentialId])) }
        }
    }

    public func clearPushNotifications() async throws {
        try await run("clear notifications") {
            try await items.exclusively { _ = try await items.keyring.clear(attributes(notificationService)) }
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

    /// Counts items without opening them.
    public func countPushNotifications(credentialId: String?) async throws -> Int {
        try await run("count notifications") {
            try await items.keyring.count(attributes(notificationService, extra: credentialId.map { ["credentialId": $0] } ?? [:]))
        }
    }

    public func getOldestPushNotifications(limit: Int, credentialId: String?) async throws -> [PushNotification] {
        try await run("retrieve oldest notifications") { NotificationRules.oldest(try await notifications(), limit: limit, credentialId) }
    }

    public func purgePushNotificationsByAge(maxAgeDays: Int, credentialId: String?) async throws -> Int {
        try await run("purge notifications by age") {
            try await removeChosen { NotificationRules.olderThan($0, maxAgeDays: maxAgeDays, credentialId) }
        }
    }

    public func purgePushNotificationsByCount(maxCount: Int, credentialId: String?) async throws -> Int {
        try await run("purge notifications by count") {
            try await removeChosen { NotificationRules.beyondCount($0, maxCount: maxCount, credentialId) }
        }
    }

    // MARK: - Items

    private func attributes(_ service: String, id: String? = nil, extra: [String: String] = [:]) -> [String: String] {
        var attributes = extra.merging(["service": service, "accessGroup": accessGroup ?? ""]) { $1 }
        attributes["account"] = id
        return attributes
    }

    private func field(_ service: String, _ id: String) -> String { "push/\(service)/\(id)" }

    private func store(_ value: some Encodable, service: String, id: String, extra: [String: String] = [:]) async throws {
        let json = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        let sealed = try await items.seal(json, boundTo: field(service, id))
        try await items.keyring.store(sealed, attributes: attributes(service, id: id, extra: extra),
                                      label: "Coffer push record (\(service))", contentType: "application/octet-stream")
    }

    private func read<T: Decodable & Identifiable>(_ type: T.Type, service: String, id: String) async throws -> T? where T.ID == String {
        guard let item = try await items.single(attributes(service, id: id)) else { return nil }
        return try await open(type, item, service: service, id: id)
    }

    private func readAll<T: Decodable & Identifiable>(_ type: T.Type, service: String, extra: [String: String] = [:]) async throws -> [T] where T.ID == String {
        var values: [T] = []
        for item in try await items.keyring.search(attributes(service, extra: extra)) {
            let id = item.attributes["account"] ?? ""
            do { values.append(try await open(type, item, service: service, id: id)) } catch {
                logger.w("Skipped a push record that cannot be read (\(service) \(id))", error: error)
            }
        }
        return values
    }

    private func notifications(_ extra: [String: String] = [:]) async throws -> [PushNotification] {
        try await readAll(PushNotification.self, service: notificationService, extra: extra)
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
        guard service == tokenService || value.id == id else {
            throw PushStorageError.storageFailure("the item \(service) \(id) holds the record \(value.id)", nil)
        }
        return value
    }

    /// Chooses notifications from the current list and removes them, under the lock, so a
    /// notification stored meanwhile is neither chosen from a stale list nor lost.
    private func removeChosen(_ choose: ([PushNotification]) -> [String]) async throws -> Int {
        try await items.exclusively {
            var removed = 0
            for id in choose(try await notifications()) {
                removed += try await items.keyring.clear(attributes(notificationService, id: id))
            }
            return removed
        }
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
