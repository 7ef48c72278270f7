import CofferPostgres
import CofferMFAEngine
import CofferAuthenticator
import CofferStorage
import Foundation
import Logging
import PostgresNIO

/// The authenticator's `StorageClient` on PostgreSQL: the accounts, mechanisms and
/// notifications of one *owner* (a user of an authentication service), in tables that many
/// owners and many instances share.
///
/// Two faces over the same rows:
/// - the spec's synchronous `StorageClient` protocol, for apps and the `coffer` tool (each
///   call blocks its thread until the database answers, at most the operation deadline);
/// - an async API for servers, which blocks no thread: ``account(issuer:accountName:)``,
///   ``save(_:)-(Account)``, ``insert(_:)``, ``advanceCounter(of:)`` and the rest.
///
/// What it promises, like `SQLiteStorageClient`:
/// - Secrets (a mechanism's secret and challenge, a notification's challenge) are sealed with
///   AES-256-GCM under the database's key ring (`DatabaseKeyStore`), each bound to the owner,
///   its row and the columns that decide which code is shown (issuer, account name, type,
///   algorithm, digits, period, counter). A row moved to another owner or row, or edited, does
///   not open: it is left out of results, counted in ``unreadableRecordCount`` and never
///   changed. Names, types and times are plain, so every lookup is an indexed query.
/// - A write never replaces another object: ``insert(_:)`` only inserts, and ``save(_:)-(Mechanism)``
///   updates only the row with the same UUID, account and type (`StorageClientError`).
/// - A HOTP counter moves by compare-and-swap in one statement (``advanceCounter(of:)``): no
///   two callers, on any instance, get the same value.
/// - Removing an account or mechanism that owns records fails, unless asked to remove them with
///   it; then all of them are removed in one transaction, and only if every one of them can be
///   read (nothing unreadable is deleted unseen).
/// - With the database unreachable, a call fails with `PostgresStorageError` (`.unavailable`)
///   when its deadline passes; with another key-encryption key, with `.wrongKeyEncryptionKey`:
///   neither is ever taken for a damaged record.
///
/// ```swift
/// let client = PostgresStorageClient(database: database, owner: user.id)
/// try await client.insert(mechanism)
/// let claimed = try await client.advanceCounter(of: mechanism.mechanismUUID)
/// ```
public final class PostgresStorageClient: StorageClientDiagnostics, CustomReflectable, Sendable {
    /// The key ring alias the client seals under unless told otherwise.
    public static let defaultKeyAlias = "org.coffer.authenticator"

    /// Whose records these are: every query is scoped to it, and every sealed field bound to it.
    public let owner: String
    /// The database.
    public let database: CofferDatabase
    /// The key ring in `coffer_keys` that seals the secrets.
    public let keyAlias: String
    /// The key store of that ring: the database's shared one, or the owner's own
    /// (``init(database:owner:keyEncryptionKey:keyAlias:logger:)``).
    public let keys: DatabaseKeyStore
    let sealer: FieldSealer
    let diagnostics: ClientDiagnostics

    /// The owner, the key alias and the database (which dumps only where it connects): never a
    /// record, a secret or the database password.
    public var customMirror: Mirror {
        Mirror(self, children: ["owner": owner, "keyAlias": keyAlias, "keys": keys, "database": database], displayStyle: .class)
    }

    /// Whether the secrets are sealed under a key ring of the owner's own.
    public var hasOwnKeyRing: Bool { !keys.ringOwner.isEmpty }

    /// A client for `owner`'s records in `database` (which must be running; see
    /// `CofferDatabase/run()`, and migrated, `CofferDatabase/migrate()`), sealed under the
    /// database's shared key ring: whoever holds the instance's key-encryption key can open
    /// every owner's secrets (a server acting for all its users).
    ///
    /// - Parameters:
    ///   - database: The shared database.
    ///   - owner: Whose records (a user id of your service); every query is scoped to it.
    ///   - keyAlias: The key ring in `coffer_keys` that seals the secrets.
    ///   - logger: Receives a line for every failure (never a secret).
    public convenience init(database: CofferDatabase, owner: String, keyAlias: String = defaultKeyAlias,
                            logger: Logger = Logger(label: "org.coffer.postgres.authenticator")) {
        self.init(database: database, owner: owner, keys: database.keys, keyAlias: keyAlias, logger: logger)
    }

    /// A client for `owner`'s records sealed under a key ring of the owner's own, wrapped under
    /// `keyEncryptionKey`, which only the owner holds: someone else with the owner's name, a
    /// database login and their own key-encryption key opens nothing of the owner's
    /// (`.wrongKeyEncryptionKey`, nothing changed). The `coffer` tool gives every owner its own.
    ///
    /// - Throws: `PostgresStorageError` `.invalidConfiguration` for an empty owner (the name
    ///   of the shared ring).
    public convenience init(database: CofferDatabase, owner: String, keyEncryptionKey: KeyEncryptionKey,
                            keyAlias: String = defaultKeyAlias, logger: Logger = Logger(label: "org.coffer.postgres.authenticator")) throws {
        guard !owner.isEmpty else {
            throw PostgresStorageError.invalidConfiguration("an owner with a key ring of its own needs a name (the empty name is the shared ring's)")
        }
        self.init(database: database, owner: owner, keys: database.keyStore(owner: owner, keyEncryptionKey: keyEncryptionKey),
                  keyAlias: keyAlias, logger: logger)
    }

    private init(database: CofferDatabase, owner: String, keys: DatabaseKeyStore, keyAlias: String, logger: Logger) {
        self.owner = owner
        self.database = database
        self.keyAlias = keyAlias
        self.keys = keys
        sealer = FieldSealer(encryptor: AESGCMEncryptor(keyAlias: keyAlias, keyStore: keys))
        diagnostics = ClientDiagnostics(logger: logger, store: "PostgreSQL")
    }

    /// The cause of the most recent failed call, if any.
    public var lastError: (any Error)? { diagnostics.lastError }

    /// How many stored records could not be read back (moved, edited, damaged) since this client
    /// was created.
    public var unreadableRecordCount: Int { diagnostics.unreadableRecordCount }

    /// The records counted in ``unreadableRecordCount`` (the first 100), each with why.
    public var unreadableRecords: [String] { diagnostics.unreadableRecords }

    /// Checks that this client's key-encryption key opens its key ring (when there is one yet):
    /// throws `PostgresStorageError` `.wrongKeyEncryptionKey` otherwise, and `.unavailable`
    /// when the database cannot be reached. Every write checks it first (the newest key's id is
    /// cached for `CofferDatabase/Configuration/Options/keyCacheLifetime`), so a client with
    /// another key-encryption key changes nothing, not even the unsealed account rows. Call it at
    /// start: afterwards the synchronous API's empty answers can be trusted to mean "nothing
    /// stored".
    public func verifyKeyRing() async throws {
        _ = try await keys.primaryKey(for: keyAlias)
    }

    // MARK: - Reading

    /// The account, if stored.
    public func account(issuer: String, accountName: String) async throws -> Account? {
        let rows = try await query("read an account", """
            \(unescaped: AccountColumns.select)WHERE owner = \(owner) AND issuer = \(issuer) AND account_name = \(accountName)
            """)
        return try await accounts(rows, "account").first
    }

    /// Every account, oldest first.
    public func allAccounts() async throws -> [Account] {
        let rows = try await query("read the accounts", """
            \(unescaped: AccountColumns.select)WHERE owner = \(owner) \(unescaped: AccountColumns.listingOrder)
            """)
        return try await accounts(rows, "allAccounts")
    }

    /// Every account's names, in the order of ``allAccounts()``: four columns, nothing opened.
    /// A row whose names cannot be read is counted and left out, as by ``allAccounts()``.
    public func allAccountNames() async throws -> [AccountNames] {
        let rows = try await query("read the accounts' names", """
            \(unescaped: AccountColumns.selectNames)WHERE owner = \(owner) \(unescaped: AccountColumns.listingOrder)
            """)
        let owner = self.owner
        return rows.compactMap { row in
            diagnostics.readable("allAccountNames", row.recordName("account", owner: owner)) { try AccountNames(row, owner: owner) }
        }
    }

    /// The mechanism with `uuid`, if stored and readable.
    public func mechanism(uuid: String) async throws -> Mechanism? {
        try await mechanisms("read a mechanism", """
            \(unescaped: StoredMechanism.select)WHERE owner = \(owner) AND mechanism_uuid = \(uuid)
            """).first
    }

    /// The account's readable mechanisms, oldest first.
    public func mechanisms(of account: Account) async throws -> [Mechanism] {
        try await mechanisms("read an account's mechanisms", """
            \(unescaped: StoredMechanism.select)WHERE owner = \(owner) AND issuer = \(account.issuer) AND account_name = \(account.accountName)
            ORDER BY time_added, mechanism_uuid
            """)
    }

    /// The mechanism's readable notifications, oldest first.
    public func notifications(of mechanism: Mechanism) async throws -> [PushNotification] {
        try await notifications("read a mechanism's notifications", """
            \(unescaped: NotificationRecord.select)WHERE owner = \(owner) AND mechanism_uuid = \(mechanism.mechanismUUID)
            ORDER BY time_added, message_id
            """)
    }

    /// The notification with `messageId` for `mechanism`, if stored and readable.
    public func notification(messageId: String, of mechanism: Mechanism) async throws -> PushNotification? {
        try await notifications("read a notification", """
            \(unescaped: NotificationRecord.select)WHERE owner = \(owner) AND mechanism_uuid = \(mechanism.mechanismUUID) AND message_id = \(messageId)
            """).first
    }

    /// Every readable notification of the owner, oldest first.
    public func allNotifications() async throws -> [PushNotification] {
        try await notifications("read the notifications", """
            \(unescaped: NotificationRecord.select)WHERE owner = \(owner) ORDER BY time_added, message_id
            """)
    }

    /// The owner's push device token, if stored.
    public func pushDeviceToken() async throws -> PushDeviceToken? {
        let rows = try await query("read the push device token", "SELECT token_id, time_added FROM coffer_push_tokens WHERE owner = \(owner)")
        return try rows.first.map { row in
            var cursor = ColumnCursor(row, record: "push device token of \(owner)", columns: ["token_id", "time_added"])
            return PushDeviceToken(tokenId: try cursor.next(), timeAdded: Date(timeIntervalSinceReferenceDate: try cursor.next()))
        }
    }

    /// How many records the owner has, readable or not.
    public func recordCounts() async throws -> (accounts: Int, mechanisms: Int, notifications: Int) {
        let rows = try await query("count the records", """
            SELECT (SELECT count(*) FROM coffer_accounts WHERE owner = \(owner)),
                   (SELECT count(*) FROM coffer_mechanisms WHERE owner = \(owner)),
                   (SELECT count(*) FROM coffer_notifications WHERE owner = \(owner))
            """)
        guard let row = rows.first else { return (0, 0, 0) }
        let (accounts, mechanisms, notifications) = try row.decode((Int, Int, Int).self)
        return (accounts, mechanisms, notifications)
    }

    // MARK: - Running queries

    /// Runs a read under the database's deadline and returns all its rows.
    func query(_ operation: String, _ query: PostgresQuery) async throws -> [PostgresRow] {
        try await database.read(operation, query)
    }

    /// Runs one writing statement in a transaction of its own, acknowledged once committed.
    /// Like every write, only once the key ring is known to open (``verifyKeyRing()``).
    @discardableResult
    func execute(_ operation: String, _ query: PostgresQuery) async throws -> [PostgresRow] {
        try await verifyKeyRing()
        return try await database.write(operation, query)
    }

    /// Runs `body` in one transaction under the database's deadline, acknowledged once committed;
    /// only once the key ring is known to open.
    func transaction<R: Sendable>(_ operation: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        try await verifyKeyRing()
        return try await database.write(operation, body)
    }

    /// Decodes and opens mechanism rows; unreadable ones are counted and left out.
    func mechanisms(_ operation: String, _ query: PostgresQuery) async throws -> [Mechanism] {
        let rows = try await self.query(operation, query)
        let records = rows.compactMap { row in diagnostics.readable(operation, row.recordName("mechanism", owner: owner)) { try StoredMechanism(row, owner: owner) } }
        return try await open(records, operation)
    }

    /// Opens the records' sealed fields (one key lookup for them all).
    func open(_ records: [StoredMechanism], _ operation: String) async throws -> [Mechanism] {
        let fields = records.flatMap { $0.sealedFields(owner: owner) }
        let opened = try checked(fields, await sealer.opening(fields))
        return records.compactMap { record in
            diagnostics.readable(operation, "mechanism \(record.uuid) of \(owner)") { try record.mechanism(owner: owner, opened) }
        }
    }

    /// Decodes and opens notification rows; unreadable ones are counted and left out.
    func notifications(_ operation: String, _ query: PostgresQuery) async throws -> [PushNotification] {
        let rows = try await self.query(operation, query)
        let records = rows.compactMap { row in
            diagnostics.readable(operation, row.recordName("notification", owner: owner)) { try NotificationRecord(row, owner: owner) }
        }
        // Each record's field identity is worked out once, and its result taken by position (a
        // listing of a hundred notifications worked each identity out twice and looked each
        // result up by it).
        let fields = records.map { ($0.sealedChallenge, $0.field(owner: owner)) }
        let results = await sealer.opening(fields)
        try throwDatabaseCause(in: results)
        return zip(records, results).compactMap { record, result in
            diagnostics.readable(operation, "notification \(record.notification.messageId) of \(owner)") {
                var notification = record.notification
                notification.challenge = try result.get()
                return notification
            }
        }
    }

    /// The opened fields, unless a field failed because the database could not give its key
    /// (down, another key-encryption key): that is the database's failure, thrown, not a
    /// damaged record.
    func checked(_ fields: [(sealed: Data, field: String)], _ results: [Result<String, any Error>]) throws -> OpenedFields {
        try throwDatabaseCause(in: results)
        return OpenedFields(fields, results)
    }

    /// Throws the database's failure if a field failed because of it (see ``checked(_:_:)``).
    func throwDatabaseCause(in results: [Result<String, any Error>]) throws {
        for case .failure(let error) in results {
            if let cause = PostgresStorageError.databaseCause(of: error) { throw cause }
        }
    }
}
