import CofferMFACommons
import CofferMFAEngine
import CofferStorage
import Foundation
import GRDB

/// ``PushStorage`` on one SQLite file, through GRDB: Android's tables, with what Android leaves
/// in the clear sealed.
///
/// - The shared secret is sealed and bound to its row and to the issuer, account, endpoint and
///   platform (a secret copied to another row, or an endpoint redirected, does not open); each
///   notification's challenge and load balancer cookie are sealed and bound to the notification,
///   its credential and its message id; the device token is sealed too.
/// - Removing a credential (or all) removes its notifications in the same transaction; purges
///   choose and delete in one transaction, so a notification stored meanwhile is never lost.
/// - Every listing and lookup is an indexed query; counts never open a sealed field.
/// - The file is created 0600 in a 0700 directory, checked before use, in WAL mode, so several
///   processes can share it; a file that is not Coffer's is refused.
public final class SQLitePushStorage: PushStorage {
    /// The database file.
    public let path: String
    private let database: DatabasePool
    private let sealer: FieldSealer
    private let logger: any CofferMFACommons.Logger

    /// Opens (creating and migrating when needed) the database at `path`, sealing with
    /// `encryptor`; rows a listing skips are logged to `logger` (default `LogManager.logger`).
    public init(path: String, encryptor: any Encryptor, logger: (any CofferMFACommons.Logger)? = nil) throws {
        self.path = path
        self.sealer = FieldSealer(encryptor: encryptor)
        self.logger = logger ?? LogManager.logger
        self.database = try SQLiteDatabaseFile.open(path: path, migrator: SQLitePushSchema.migrator)
    }

    // MARK: - Credentials

    public func storePushCredential(_ credential: PushCredential) async throws {
        try await run("store credential") {
            let sealed = try await sealer.sealing([(credential.secret, credential.sealedSecretIdentity)])[0]
            try await database.write { db in
                try db.execute(sql: """
                    INSERT OR REPLACE INTO mfa_push_credentials (id, user_id, resource_id, issuer, display_issuer, account_name,
                        display_account_name, server_endpoint, shared_secret, platform, created_at, image_url, background_color,
                        policies, locking_policy, is_locked)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [credential.id, credential.userId, credential.resourceId, credential.issuer, credential.displayIssuer,
                                     credential.accountName, credential.displayAccountName, credential.serverEndpoint, sealed,
                                     credential.platform.rawValue, credential.createdAt.timeIntervalSinceReferenceDate, credential.imageURL,
                                     credential.backgroundColor, credential.policies, credential.lockingPolicy, credential.isLocked])
            }
        }
    }

    /// Every readable credential, newest first; a row that cannot be read is logged and skipped.
    public func getAllPushCredentials() async throws -> [PushCredential] {
        try await run("retrieve credentials") {
            try await openCredentials(try await database.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM mfa_push_credentials ORDER BY created_at DESC, id DESC").map(StoredRow.credential)
            }, skipping: true)
        }
    }

    public func retrievePushCredential(credentialId: String) async throws -> PushCredential? {
        try await run("retrieve credential") {
            try await openCredentials(try await database.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM mfa_push_credentials WHERE id = ?", arguments: [credentialId]).map(StoredRow.credential)
            }, skipping: false).first
        }
    }

    /// Removes the credential and its notifications in one transaction.
    public func removePushCredential(credentialId: String) async throws -> Bool {
        try await run("remove credential") {
            try await database.write { db in
                try db.execute(sql: "DELETE FROM mfa_push_notifications WHERE credential_id = ?", arguments: [credentialId])
                try db.execute(sql: "DELETE FROM mfa_push_credentials WHERE id = ?", arguments: [credentialId])
                return db.changesCount > 0
            }
        }
    }

    /// Removes every credential and every notification, in one transaction.
    public func clearPushCredentials() async throws {
        try await run("clear credentials") {
            try await database.write { db in
                try db.execute(sql: "DELETE FROM mfa_push_notifications")
                try db.execute(sql: "DELETE FROM mfa_push_credentials")
            }
        }
    }

    // MARK: - Notifications

    public func storePushNotification(_ notification: PushNotification) async throws {
        try await run("store notification") {
            let fields = notification.sealedFieldIdentities
            let sealed = try await sealer.sealing([(notification.challenge ?? "", fields.challenge), (notification.loadBalancer ?? "", fields.cookie)])
            try await database.write { db in
                try db.execute(sql: """
                    INSERT OR REPLACE INTO mfa_push_notifications (id, credential_id, message_id, message_text, custom_payload, challenge,
                        numbers_challenge, amlb_cookie, context_info, push_type, ttl, pending, approved, created_at, sent_at, responded_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [notification.id, notification.credentialId, notification.messageId, notification.messageText,
                                     notification.customPayload, notification.challenge == nil ? nil : sealed[0], notification.numbersChallenge,
                                     notification.loadBalancer == nil ? nil : sealed[1], notification.contextInfo, notification.pushType.rawValue,
                                     notification.ttl, notification.pending, notification.approved,
                                     notification.createdAt.timeIntervalSinceReferenceDate, notification.sentAt?.timeIntervalSinceReferenceDate,
                                     notification.respondedAt?.timeIntervalSinceReferenceDate])
            }
        }
    }

    public func updatePushNotification(_ notification: PushNotification) async throws {
        try await storePushNotification(notification)
    }

    public func getAllPushNotifications() async throws -> [PushNotification] {
        try await notifications("retrieve notifications", "ORDER BY created_at DESC, id DESC", [], skipping: true)
    }

    /// Those pending and not expired, newest first: one indexed query, expiry decided in it
    /// (so expired ones, however many, are never read).
    public func getPendingPushNotifications() async throws -> [PushNotification] {
        let now = Date().timeIntervalSinceReferenceDate
        // No ORDER BY: with one, SQLite walks the time index through every row; the few pending
        // ones are put in order here.
        return NotificationRules.newestFirst(try await notifications("retrieve notifications", "WHERE pending = 1 AND created_at + ttl >= ?",
                                                                     [now], skipping: true).filter { !$0.isExpired })
    }

    public func retrievePushNotification(notificationId: String) async throws -> PushNotification? {
        try await notifications("retrieve notification", "WHERE id = ?", [notificationId], skipping: false).first
    }

    /// The newest with this message id; `nil` for a blank one.
    public func getNotificationByMessageId(messageId: String) async throws -> PushNotification? {
        guard !messageId.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return try await notifications("retrieve notification", "WHERE message_id = ? ORDER BY created_at DESC, id DESC LIMIT 1",
                                       [messageId], skipping: false).first
    }

    public func removePushNotification(notificationId: String) async throws -> Bool {
        try await run("remove notification") {
            try await database.write { db in
                try db.execute(sql: "DELETE FROM mfa_push_notifications WHERE id = ?", arguments: [notificationId])
                return db.changesCount > 0
            }
        }
    }

    public func removePushNotificationsForCredential(credentialId: String) async throws -> Int {
        try await run("remove notifications for credential") {
            try await database.write { db in
                try db.execute(sql: "DELETE FROM mfa_push_notifications WHERE credential_id = ?", arguments: [credentialId])
                return db.changesCount
            }
        }
    }

    public func clearPushNotifications() async throws {
        try await run("clear notifications") { try await database.write { try $0.execute(sql: "DELETE FROM mfa_push_notifications") } }
    }

    // MARK: - Device token

    /// Makes `token` the one current token (earlier ones are kept, not current, as on Android).
    public func storePushDeviceToken(_ token: PushDeviceToken) async throws {
        try await run("store device token") {
            let sealed = try await sealer.sealing([(token.token, token.sealedIdentity)])[0]
            try await database.write { db in
                try db.execute(sql: "UPDATE mfa_push_device_tokens SET is_current = 0")
                try db.execute(sql: "INSERT OR REPLACE INTO mfa_push_device_tokens (id, token_id, created_at, is_current) VALUES (?, ?, ?, 1)",
                               arguments: [token.id, sealed, token.createdAt.timeIntervalSinceReferenceDate])
            }
        }
    }

    public func getCurrentPushDeviceToken() async throws -> PushDeviceToken? {
        try await run("retrieve device token") {
            let row = try await database.read { db -> (String, Data, Double)? in
                guard let row = try Row.fetchOne(db, sql: "SELECT * FROM mfa_push_device_tokens WHERE is_current = 1 ORDER BY created_at DESC LIMIT 1") else { return nil }
                guard let id: String = row.lenient("id"), let sealed: Data = row.lenient("token_id"),
                      let created: Double = row.lenient("created_at") else {
                    throw PushStorageError.storageFailure("the current device token's row has a column of the wrong type", nil)
                }
                return (id, sealed, created)
            }
            guard let (id, sealed, created) = row else { return nil }
            let token = try await sealer.opening([(sealed, PushDeviceToken.sealedIdentity(id: id))])[0].get()
            return PushDeviceToken(id: id, token: token, createdAt: Date(timeIntervalSinceReferenceDate: created))
        }
    }

    public func clearPushDeviceTokens() async throws {
        try await run("clear device tokens") { try await database.write { try $0.execute(sql: "DELETE FROM mfa_push_device_tokens") } }
    }

    // MARK: - Cleanup

    public func countPushNotifications(credentialId: String?) async throws -> Int {
        try await run("count notifications") {
            try await database.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM mfa_push_notifications" + (credentialId == nil ? "" : " WHERE credential_id = ?"),
                                 arguments: StatementArguments(credentialId.map { [$0] } ?? [])) ?? 0
            }
        }
    }

    /// The oldest `limit`, oldest first; nothing for a limit of 0 or less.
    public func getOldestPushNotifications(limit: Int, credentialId: String?) async throws -> [PushNotification] {
        guard limit > 0 else { return [] }
        let scope = credentialId == nil ? "" : "WHERE credential_id = ? "
        return try await notifications("retrieve oldest notifications", scope + "ORDER BY created_at, id LIMIT \(limit)",
                                       credentialId.map { [$0] } ?? [], skipping: true)
    }

    /// Deletes the strictly older ones in one statement.
    public func purgePushNotificationsByAge(maxAgeDays: Int, credentialId: String?) async throws -> Int {
        try await run("purge notifications by age") {
            let cutoff = NotificationRules.cutoff(maxAgeDays: maxAgeDays).timeIntervalSinceReferenceDate
            return try await database.write { db in
                try db.execute(sql: "DELETE FROM mfa_push_notifications WHERE created_at < ?" + (credentialId == nil ? "" : " AND credential_id = ?"),
                               arguments: StatementArguments([cutoff] + (credentialId.map { [$0] } ?? [])))
                return db.changesCount
            }
        }
    }

    /// Keeps the newest `maxCount` in scope, in one transaction; a negative count deletes nothing.
    public func purgePushNotificationsByCount(maxCount: Int, credentialId: String?) async throws -> Int {
        guard maxCount >= 0 else { return 0 }
        return try await run("purge notifications by count") {
            try await database.write { db in
                let scope = credentialId == nil ? "" : "WHERE credential_id = ? "
                let scopeArguments = credentialId.map { [$0] } ?? []
                try db.execute(sql: """
                    DELETE FROM mfa_push_notifications WHERE id IN (
                        SELECT id FROM mfa_push_notifications \(scope)ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?)
                    """, arguments: StatementArguments(scopeArguments + [maxCount]))
                return db.changesCount
            }
        }
    }

    // MARK: - Rows

    private func openCredentials(_ rows: [Result<StoredRow, UnreadablePushRow>], skipping: Bool) async throws -> [PushCredential] {
        var result: [PushCredential] = []
        for row in rows {
            do {
                let stored = try row.get()
                guard case .credential(let credential, let sealed) = stored else { continue }
                let opened = await sealer.opening([(sealed, credential.sealedSecretIdentity)])[0]
                result.append(credential.replacing(sharedSecret: try Self.opened(opened, credential.id)))
            } catch {
                guard skipping else { throw error }
                logger.w("Skipped a push credential that cannot be read", error: error)
            }
        }
        return result
    }

    private func notifications(_ operation: String, _ clause: String, _ arguments: [any DatabaseValueConvertible & Sendable],
                               skipping: Bool) async throws -> [PushNotification] {
        try await run(operation) {
            let rows = try await database.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM mfa_push_notifications " + clause, arguments: StatementArguments(arguments))
                    .map(StoredRow.notification)
            }
            var result: [PushNotification] = []
            for row in rows {
                do {
                    guard case .notification(let notification, let challenge, let cookie) = try row.get() else { continue }
                    let fields = notification.sealedFieldIdentities
                    var sealed: [(sealed: Data, field: String)] = []
                    if let challenge { sealed.append((challenge, fields.challenge)) }
                    if let cookie { sealed.append((cookie, fields.cookie)) }
                    let opened = await sealer.opening(sealed)
                    var index = 0
                    func next() throws -> String {
                        defer { index += 1 }
                        return try Self.opened(opened[index], notification.id)
                    }
                    result.append(notification.withSealedFields(challenge: challenge == nil ? nil : try next(), loadBalancer: cookie == nil ? nil : try next()))
                } catch {
                    guard skipping else { throw error }
                    logger.w("Skipped a push notification that cannot be read", error: error)
                }
            }
            return result
        }
    }

    private static func opened(_ result: Result<String, any Error>, _ id: String) throws -> String {
        switch result {
        case .success(let text): return text
        case .failure(let error):
            if case .identityMismatch? = error as? StorageError {
                throw PushStorageError.storageFailure("the sealed field of \(id) does not belong to its row as it is (moved, or a column edited)", error)
            }
            throw error
        }
    }

    private func run<R>(_ operation: String, _ body: () async throws -> R) async throws -> R {
        do { return try await body() } catch let error as PushStorageError { throw error } catch {
            throw PushStorageError.storageFailure("Failed to \(operation)", error)
        }
    }
}

/// A row as read, before its sealed fields are opened.
private enum StoredRow: Sendable {
    case credential(PushCredential, sealed: Data)
    case notification(PushNotification, challenge: Data?, cookie: Data?)

    static func credential(_ row: Row) -> Result<StoredRow, UnreadablePushRow> {
        let id: String = row.lenient("id") ?? "?"
        guard let issuer: String = row.lenient("issuer"), let account: String = row.lenient("account_name"), let endpoint: String = row.lenient("server_endpoint"),
              let sealed: Data = row.lenient("shared_secret"), let platform = PushPlatform(rawValue: (row.lenient("platform") as String?) ?? ""),
              let created: Double = row.lenient("created_at"), let resourceId: String = row.lenient("resource_id") else {
            return .failure(UnreadablePushRow(id: id))
        }
        return .success(.credential(PushCredential(
            id: id, userId: row.lenient("user_id"), resourceId: resourceId, issuer: issuer, displayIssuer: row.lenient("display_issuer"),
            accountName: account, displayAccountName: row.lenient("display_account_name"), serverEndpoint: endpoint, sharedSecret: "",
            createdAt: Date(timeIntervalSinceReferenceDate: created), imageURL: row.lenient("image_url"), backgroundColor: row.lenient("background_color"),
            policies: row.lenient("policies"), lockingPolicy: row.lenient("locking_policy"), isLocked: row.lenient("is_locked") ?? false, platform: platform), sealed: sealed))
    }

    static func notification(_ row: Row) -> Result<StoredRow, UnreadablePushRow> {
        let id: String = row.lenient("id") ?? "?"
        guard let credentialId: String = row.lenient("credential_id"), let messageId: String = row.lenient("message_id"), let ttl: Int = row.lenient("ttl"),
              let type = PushType(rawValue: ((row.lenient("push_type") as String?) ?? "").lowercased()), let created: Double = row.lenient("created_at") else {
            return .failure(UnreadablePushRow(id: id))
        }
        return .success(.notification(PushNotification(
            id: id, credentialId: credentialId, ttl: ttl, messageId: messageId, messageText: row.lenient("message_text"),
            customPayload: row.lenient("custom_payload"), numbersChallenge: row.lenient("numbers_challenge"), contextInfo: row.lenient("context_info"),
            pushType: type, createdAt: Date(timeIntervalSinceReferenceDate: created),
            sentAt: (row.lenient("sent_at") as Double?).map(Date.init(timeIntervalSinceReferenceDate:)),
            respondedAt: (row.lenient("responded_at") as Double?).map(Date.init(timeIntervalSinceReferenceDate:)),
            approved: row.lenient("approved") ?? false, pending: row.lenient("pending") ?? false), challenge: row.lenient("challenge"), cookie: row.lenient("amlb_cookie")))
    }
}

/// A row whose columns are of the wrong type or value.
private struct UnreadablePushRow: Error, Sendable, CustomStringConvertible {
    let id: String
    var description: String { "the row of \(id) has a column of the wrong type or value" }
}
