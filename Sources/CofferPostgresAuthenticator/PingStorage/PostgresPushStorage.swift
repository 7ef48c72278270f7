import CofferPostgres
import CofferMFACommons
import CofferPush
import CofferStorage
import Foundation
import PostgresNIO

/// Ping's `PushStorage` on PostgreSQL: one owner's push credentials, notifications and device
/// tokens, in tables many owners and instances share (Android's columns with `owner` in front).
///
/// What it promises:
/// - The shared secret is sealed under the database's key ring and bound to the owner, its row
///   and the issuer, account, endpoint and platform; each notification's challenge and load
///   balancer cookie are sealed and bound to the owner, the notification, its credential and its
///   message id; the device token is sealed too. A row moved or edited does not open (logged and
///   skipped in listings, a `PushStorageError` when asked for by id).
/// - Removing a credential (or all of them) removes its notifications in the same transaction.
/// - A purge chooses and deletes in one statement: a notification stored meanwhile is never
///   among those deleted.
/// - One device token is current per owner, also with two instances storing at once.
/// - Every listing and lookup is an indexed query scoped to ``owner``; counts open nothing.
///
/// ```swift
/// let storage = PostgresPushStorage(database: database, owner: user.id)
/// let client = try await PushClient.createClient { config in
///     config.storage = storage
/// }
/// ```
public final class PostgresPushStorage: PushStorage, CustomReflectable {
    /// The key ring alias the storage seals under unless told otherwise (the authenticator's).
    public static let defaultKeyAlias = PostgresStorageClient.defaultKeyAlias

    let scope: OwnerScope
    private let logger: any CofferMFACommons.Logger

    /// Whose records these are.
    public var owner: String { scope.owner }
    /// The key ring in `coffer_keys` that seals the secrets.
    public var keyAlias: String { scope.keyAlias }
    /// Whether the secrets are sealed under a key ring of the owner's own.
    public var hasOwnKeyRing: Bool { !scope.keys.ringOwner.isEmpty }

    /// The owner and the key alias: never a record or a secret.
    public var customMirror: Mirror {
        Mirror(self, children: ["owner": owner, "keyAlias": keyAlias, "hasOwnKeyRing": hasOwnKeyRing], displayStyle: .class)
    }

    /// `owner`'s records in `database` (running and migrated), sealed under the database's
    /// shared key ring.
    ///
    /// - Parameters:
    ///   - database: The shared database.
    ///   - owner: Whose records; every query is scoped to it.
    ///   - keyAlias: The key ring in `coffer_keys` that seals the secrets.
    ///   - logger: Told of every row a listing skips (never a secret); default `LogManager.logger`.
    public init(database: CofferDatabase, owner: String, keyAlias: String = defaultKeyAlias,
                logger: (any CofferMFACommons.Logger)? = nil) {
        scope = OwnerScope(database: database, owner: owner, keyAlias: keyAlias)
        self.logger = logger ?? LogManager.logger
    }

    /// `owner`'s records sealed under a key ring of the owner's own, wrapped under `keyEncryptionKey`.
    ///
    /// - Throws: `PostgresStorageError` `.invalidConfiguration` for an empty owner.
    public init(database: CofferDatabase, owner: String, keyEncryptionKey: KeyEncryptionKey, keyAlias: String = defaultKeyAlias,
                logger: (any CofferMFACommons.Logger)? = nil) throws {
        scope = try OwnerScope(database: database, owner: owner, keyEncryptionKey: keyEncryptionKey, keyAlias: keyAlias)
        self.logger = logger ?? LogManager.logger
    }

    // MARK: - Credentials

    /// Stores the credential, replacing the owner's credential with the same id.
    public func storePushCredential(_ credential: PushCredential) async throws {
        let owner = owner
        try await run("store credential") {
            try await scope.write("store a push credential", sealing: [(credential.secret, credential.sealedSecretIdentity)]) { connection, sealed in
                try await self.scope.run(try PushCredentialRow.upsert(credential, sealed: sealed[0], owner: owner), on: connection)
            }
        }
    }

    /// Every readable credential, newest first; a row that cannot be read is logged and skipped.
    public func getAllPushCredentials() async throws -> [PushCredential] {
        try await credentials("retrieve credentials", "WHERE owner = \(owner) ORDER BY created_at DESC, id COLLATE \"C\" DESC", skipping: true)
    }

    /// The credential, or `nil`; one that cannot be read is a `PushStorageError`.
    public func retrievePushCredential(credentialId: String) async throws -> PushCredential? {
        try await credentials("retrieve credential", "WHERE owner = \(owner) AND id = \(credentialId)", skipping: false).first
    }

    /// Removes the credential and its notifications in one transaction; returns whether there was such a credential.
    public func removePushCredential(credentialId: String) async throws -> Bool {
        let owner = owner
        return try await run("remove credential") {
            try await scope.write("remove a push credential") { connection, _ in
                try await self.scope.run("DELETE FROM coffer_push_notifications WHERE owner = \(owner) AND credential_id = \(credentialId)",
                                         on: connection)
                return try await !self.scope.run("DELETE FROM coffer_push_credentials WHERE owner = \(owner) AND id = \(credentialId) RETURNING 1",
                                                 on: connection).isEmpty
            }
        }
    }

    /// Removes every credential and every notification of the owner, in one transaction.
    public func clearPushCredentials() async throws {
        let owner = owner
        try await run("clear credentials") {
            try await scope.write("remove the push credentials") { connection, _ in
                try await self.scope.run("DELETE FROM coffer_push_notifications WHERE owner = \(owner)", on: connection)
                try await self.scope.run("DELETE FROM coffer_push_credentials WHERE owner = \(owner)", on: connection)
            }
        }
    }

    // MARK: - Notifications

    /// Stores the notification, replacing the owner's notification with the same id.
    public func storePushNotification(_ notification: PushNotification) async throws {
        let owner = owner, identities = notification.sealedFieldIdentities
        try await run("store notification") {
            try await scope.write("store a push notification", sealing: [
                (notification.challenge ?? "", identities.challenge), (notification.loadBalancer ?? "", identities.cookie),
            ]) { connection, sealed in
                try await self.scope.run(try PushNotificationRow.upsert(
                    notification, challenge: notification.challenge == nil ? nil : sealed[0],
                    cookie: notification.loadBalancer == nil ? nil : sealed[1], owner: owner), on: connection)
            }
        }
    }

    /// Stores the notification as it is now (the same as storing it).
    public func updatePushNotification(_ notification: PushNotification) async throws {
        try await storePushNotification(notification)
    }

    /// Every readable notification, newest first.
    public func getAllPushNotifications() async throws -> [PushNotification] {
        try await notifications("retrieve notifications", "WHERE owner = \(owner) ORDER BY created_at DESC, id COLLATE \"C\" DESC", skipping: true)
    }

    /// Those pending and not expired, newest first: one indexed query, expiry decided in it.
    public func getPendingPushNotifications() async throws -> [PushNotification] {
        let now = Date().timeIntervalSinceReferenceDate
        // No ORDER BY (the planner would walk the time index); the few pending ones are put in order here.
        return NotificationRules.newestFirst(try await notifications("retrieve notifications", """
            WHERE owner = \(owner) AND pending AND created_at + ttl >= \(now)
            """, skipping: true).filter { !$0.isExpired })
    }

    /// The notification, or `nil`.
    public func retrievePushNotification(notificationId: String) async throws -> PushNotification? {
        try await notifications("retrieve notification", "WHERE owner = \(owner) AND id = \(notificationId)", skipping: false).first
    }

    /// The newest with this message id; `nil` for a blank one.
    public func getNotificationByMessageId(messageId: String) async throws -> PushNotification? {
        guard !messageId.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return try await notifications("retrieve notification", """
            WHERE owner = \(owner) AND message_id = \(messageId) ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT 1
            """, skipping: false).first
    }

    /// Removes the notification; returns whether there was one.
    public func removePushNotification(notificationId: String) async throws -> Bool {
        try await deleting("remove notification", "DELETE FROM coffer_push_notifications WHERE owner = \(owner) AND id = \(notificationId)") > 0
    }

    /// Removes the credential's notifications; returns how many.
    public func removePushNotificationsForCredential(credentialId: String) async throws -> Int {
        try await deleting("remove notifications for credential", """
            DELETE FROM coffer_push_notifications WHERE owner = \(owner) AND credential_id = \(credentialId)
            """)
    }

    /// Removes every notification of the owner.
    public func clearPushNotifications() async throws {
        _ = try await deleting("clear notifications", "DELETE FROM coffer_push_notifications WHERE owner = \(owner)")
    }

    // MARK: - Device token

    /// Makes `token` the owner's one current token (earlier ones are kept, not current, as on
    /// Android). Instances storing at once take turns (a transaction-scoped advisory lock per
    /// owner), and a unique index keeps one current whatever else writes the table.
    public func storePushDeviceToken(_ token: PushDeviceToken) async throws {
        let owner = owner
        try await run("store device token") {
            try await scope.write("store the push device token", sealing: [(token.token, token.sealedIdentity)]) { connection, sealed in
                try await self.scope.run("SELECT pg_advisory_xact_lock(\(Self.tokenLockClass), hashtext(\(owner)))", on: connection)
                try await self.scope.run("""
                    UPDATE coffer_push_device_tokens SET is_current = false WHERE owner = \(owner) AND is_current AND id <> \(token.id)
                    """, on: connection)
                try await self.scope.run("""
                    INSERT INTO coffer_push_device_tokens (owner, id, token, created_at, is_current)
                    VALUES (\(owner), \(token.id), \(sealed[0]), \(token.createdAt.timeIntervalSinceReferenceDate), true)
                    ON CONFLICT (owner, id) DO UPDATE SET token = excluded.token, created_at = excluded.created_at, is_current = true
                    """, on: connection)
            }
        }
    }

    /// The first key of the device-token advisory locks ("tokn"); the second is the owner's hash.
    private static let tokenLockClass: Int32 = 0x746f_6b6e

    /// The current token, or `nil`.
    public func getCurrentPushDeviceToken() async throws -> PushDeviceToken? {
        try await run("retrieve device token") {
            let rows = try await scope.read("read the push device token", """
                SELECT id, token, created_at FROM coffer_push_device_tokens WHERE owner = \(owner) AND is_current
                ORDER BY created_at DESC LIMIT 1
                """)
            guard let row = rows.first else { return nil }
            let (id, sealed, created) = try row.decode((String, Data, Double).self)
            let token = try await scope.open([(sealed, PushDeviceToken.sealedIdentity(id: id))])[0].get()
            return PushDeviceToken(id: id, token: token, createdAt: Date(timeIntervalSinceReferenceDate: created))
        }
    }

    /// Removes every device token of the owner.
    public func clearPushDeviceTokens() async throws {
        _ = try await deleting("clear device tokens", "DELETE FROM coffer_push_device_tokens WHERE owner = \(owner)")
    }

    // MARK: - Cleanup

    /// How many notifications the owner has (of one credential, given its id); opens nothing.
    public func countPushNotifications(credentialId: String?) async throws -> Int {
        try await run("count notifications") {
            let rows = try await scope.read("count the push notifications", """
                SELECT count(*) FROM coffer_push_notifications WHERE owner = \(owner)
                AND (\(credentialId)::text IS NULL OR credential_id = \(credentialId))
                """)
            return try rows.first?.decode(Int.self) ?? 0
        }
    }

    /// The oldest `limit`, oldest first; nothing for a limit of 0 or less.
    public func getOldestPushNotifications(limit: Int, credentialId: String?) async throws -> [PushNotification] {
        guard limit > 0 else { return [] }
        if let credentialId {
            return try await notifications("retrieve oldest notifications", """
                WHERE owner = \(owner) AND credential_id = \(credentialId) ORDER BY created_at, id COLLATE "C" LIMIT \(limit)
                """, skipping: true)
        }
        return try await notifications("retrieve oldest notifications", "WHERE owner = \(owner) ORDER BY created_at, id COLLATE \"C\" LIMIT \(limit)",
                                       skipping: true)
    }

    /// Deletes those strictly older than `maxAgeDays` days, in one statement.
    public func purgePushNotificationsByAge(maxAgeDays: Int, credentialId: String?) async throws -> Int {
        let cutoff = NotificationRules.cutoff(maxAgeDays: maxAgeDays).timeIntervalSinceReferenceDate
        return try await deleting("purge notifications by age", """
            DELETE FROM coffer_push_notifications WHERE owner = \(owner) AND created_at < \(cutoff)
            AND (\(credentialId)::text IS NULL OR credential_id = \(credentialId))
            """)
    }

    /// Keeps the newest `maxCount` in scope, choosing and deleting in one statement; a negative
    /// count deletes nothing.
    public func purgePushNotificationsByCount(maxCount: Int, credentialId: String?) async throws -> Int {
        guard maxCount >= 0 else { return 0 }
        if let credentialId {
            return try await deleting("purge notifications by count", """
                DELETE FROM coffer_push_notifications WHERE owner = \(owner) AND id IN (
                    SELECT id FROM coffer_push_notifications WHERE owner = \(owner) AND credential_id = \(credentialId)
                    ORDER BY created_at DESC, id COLLATE "C" DESC OFFSET \(maxCount))
                """)
        }
        return try await deleting("purge notifications by count", """
            DELETE FROM coffer_push_notifications WHERE owner = \(owner) AND id IN (
                SELECT id FROM coffer_push_notifications WHERE owner = \(owner) ORDER BY created_at DESC, id COLLATE "C" DESC OFFSET \(maxCount))
            """)
    }

    // MARK: - Rows

    /// Runs one `DELETE` as a write and returns how many rows it deleted.
    private func deleting(_ operation: String, _ delete: PostgresQuery) async throws -> Int {
        var counted = PostgresQuery(unsafeSQL: "WITH gone AS (" + delete.sql + " RETURNING 1) SELECT count(*) FROM gone")
        counted.binds = delete.binds
        let query = counted
        return try await run(operation) {
            try await scope.write(operation) { connection, _ in
                try await self.scope.run(query, on: connection).first?.decode(Int.self) ?? 0
            }
        }
    }

    private func credentials(_ operation: String, _ clause: PostgresQuery, skipping: Bool) async throws -> [PushCredential] {
        try await run(operation) {
            let rows = try await scope.read(operation, Self.query(PushCredentialRow.select, clause))
            var readable: [PushCredentialRow] = []
            for row in rows {
                do { readable.append(try PushCredentialRow(row)) } catch {
                    guard skipping else { throw error }
                    logger.w("Skipped a push credential row that cannot be read", error: error)
                }
            }
            let opened = try await scope.open(readable.map { ($0.sealed, $0.credential.sealedSecretIdentity) })
            return try zip(readable, opened).compactMap { row, secret in
                do { return row.credential.replacing(sharedSecret: try Self.opened(secret, row.credential.id)) } catch {
                    guard skipping else { throw error }
                    logger.w("Skipped a push credential whose secret does not open", error: error)
                    return nil
                }
            }
        }
    }

    private func notifications(_ operation: String, _ clause: PostgresQuery, skipping: Bool) async throws -> [PushNotification] {
        try await run(operation) {
            let rows = try await scope.read(operation, Self.query(PushNotificationRow.select, clause))
            var readable: [PushNotificationRow] = []
            for row in rows {
                do { readable.append(try PushNotificationRow(row)) } catch {
                    guard skipping else { throw error }
                    logger.w("Skipped a push notification row that cannot be read", error: error)
                }
            }
            // Every present sealed field of every row, opened in one pass.
            var fields: [(sealed: Data, identity: String)] = []
            for row in readable {
                let identities = row.notification.sealedFieldIdentities
                if let challenge = row.challenge { fields.append((challenge, identities.challenge)) }
                if let cookie = row.cookie { fields.append((cookie, identities.cookie)) }
            }
            var opened = try await scope.open(fields)[...]
            var result: [PushNotification] = []
            for row in readable {
                let challenge = row.challenge.map { _ in opened.removeFirst() }
                let cookie = row.cookie.map { _ in opened.removeFirst() }
                do {
                    result.append(row.notification.withSealedFields(
                        challenge: try challenge.map { try Self.opened($0, row.notification.id) },
                        loadBalancer: try cookie.map { try Self.opened($0, row.notification.id) }))
                } catch {
                    guard skipping else { throw error }
                    logger.w("Skipped a push notification whose sealed fields do not open", error: error)
                }
            }
            return result
        }
    }

    /// `select` followed by `clause`, with the clause's binds.
    private static func query(_ select: String, _ clause: PostgresQuery) -> PostgresQuery {
        var query = PostgresQuery(unsafeSQL: select + clause.sql)
        query.binds = clause.binds
        return query
    }

    private static func opened(_ result: Result<String, any Error>, _ id: String) throws -> String {
        switch result {
        case .success(let text): return text
        case .failure(let error):
            if case .identityMismatch? = error as? StorageError {
                throw PushStorageError.storageFailure("the sealed field of \(id) does not belong to its row as it is "
                    + "(moved to another owner or row, or a column edited)", error)
            }
            throw PushStorageError.storageFailure("the sealed field of \(id) does not open", error)
        }
    }

    @discardableResult
    private func run<R>(_ operation: String, _ body: () async throws -> R) async throws -> R {
        do { return try await body() } catch let error as PushStorageError { throw error } catch {
            throw PushStorageError.storageFailure("Failed to \(operation): \(error)", error)
        }
    }
}
