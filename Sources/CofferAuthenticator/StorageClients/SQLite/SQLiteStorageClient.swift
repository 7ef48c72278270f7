import CofferMFAEngine
import Foundation
import GRDB
import Logging
import CofferStorage
import Synchronization

/// A ``StorageClient`` on one SQLite file, through GRDB: the `coffer` tool's default.
///
/// - WAL mode and a 10-second busy timeout, so several processes can use one file.
/// - Foreign keys with cascading deletes, an index for every lookup the protocol has, and
///   versioned migrations (`SQLiteSchema`).
/// - Secrets sealed field by field with the encryptor you pass, each bound to its row and to the
///   columns that decide which code is shown under which name (`MechanismBinding`): a sealed
///   secret copied to another row, or a row whose issuer, type or counter was changed, does not
///   open.
/// - Writes never replace another object: a mechanism is inserted, or updated under the same
///   UUID, account and type; a conflict fails (``StorageClientError``). Removing an account or a
///   mechanism that still owns records fails instead of cascading over them.
/// - A HOTP counter moves by compare-and-swap (``advanceCounter(mechanismUUID:)``): processes
///   sharing the file never get the same counter value.
/// - A key check sealed when the store is first used: with another key (or none), nothing new is
///   sealed (``keyProblem``), so a store never ends up under two keys.
/// - The file is created 0600 (and its directory 0700); it, its directory and SQLite's
///   companion files are checked with `FileTrust` before use.
///
/// The protocol answers with `Bool`s and optionals, so failures cannot be thrown: each failing
/// call returns `false`, `nil` or `[]`, logs its cause (never a secret) and keeps it in
/// ``lastError``. A row that cannot be decrypted or decoded is left out of results, logged, and
/// counted in ``unreadableRecordCount``; it is never deleted.
public final class SQLiteStorageClient: StorageClient, StorageClientDiagnostics, Sendable {
    /// The database file.
    public let path: String
    let database: any DatabaseWriter
    let sealer: FieldSealer
    let diagnostics: ClientDiagnostics
    /// Whether the key opens the store's key check: not known until something needs it (see
    /// ``keyProblem``), so a command that only reads pays nothing for it.
    let keyState: Mutex<KeyState>
    /// Locks held as long as the client lives (``DefaultAuthenticatorStorage``'s hold against
    /// key moves).
    private let heldLocks = Mutex<[FileLock.Held]>([])

    /// Keeps `held` until the client is released.
    package func keep(_ held: FileLock.Held) {
        heldLocks.withLock { $0.append(held) }
    }

    /// The encryptor this client seals with. What else belongs with these accounts (a trash,
    /// the HOTP counter ledger) is sealed through ``sealCompanion(_:)``, which checks the key
    /// first, never with the encryptor directly: an encryptor makes a key when its key store
    /// has none, and a store whose key is missing must not get a second one.
    package let encryptor: any Encryptor

    /// Opens (creating and migrating when needed) the database at `path`.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - encryptor: Seals secrets field by field, for example
    ///     `AESGCMEncryptor(keyAlias:keyStore:)` or `SecuredKeyEncryptor()`.
    ///   - logger: Receives a line for every failure (without secrets).
    ///   - connections: A pool (the default), or one connection for a short-lived process.
    public init(path: String, encryptor: any Encryptor, logger: Logger = Logger(label: "org.coffer.authenticator.sqlite"),
                connections: Connections = .pool) throws {
        self.path = path
        self.encryptor = encryptor
        // Everything but the first key check seals only under a key that exists: a key that
        // goes missing while the client is open (moved away by another process) is never
        // replaced by a new one.
        self.sealer = FieldSealer(encryptor: Self.sealingOnlyUnderExistingKeys(encryptor))
        self.diagnostics = ClientDiagnostics(logger: logger, store: path)
        switch connections {
        case .pool: database = try SQLiteDatabaseFile.open(path: path, migrator: SQLiteSchema.migrator)
        case .single: database = try SQLiteDatabaseFile.openSingleConnection(path: path, migrator: SQLiteSchema.migrator)
        }
        keyState = Mutex(.unchecked)
    }

    /// `encryptor`, never making a key, when it is one of Coffer's key-store encryptors.
    static func sealingOnlyUnderExistingKeys(_ encryptor: any Encryptor) -> any Encryptor {
        switch encryptor {
        case let aes as AESGCMEncryptor: aes.sealingOnlyUnderExistingKeys()
        case let secured as SecuredKeyEncryptor: secured.sealingOnlyUnderExistingKeys()
        default: encryptor
        }
    }

    /// Why nothing can be sealed now, or `nil`: the encryptor's key does not open the store's
    /// key check (the key file is missing, or the key store holds another key). Rows cannot be
    /// read then either, and every write that seals fails with
    /// ``StorageClientError/keyUnavailable(cause:)``. Checked again on each such write, so a
    /// restored key is used at once.
    public var keyProblem: (any Error)? {
        if case .unchecked = keyState.withLock({ $0 }) { return checkKey() }
        if case .unusable(let problem) = keyState.withLock({ $0 }) { return problem }
        return nil
    }

    /// The cause of the most recent failed call, if any.
    public var lastError: (any Error)? { diagnostics.lastError }

    /// How many rows could not be read back (wrong key, damaged) since this client was opened.
    public var unreadableRecordCount: Int { diagnostics.unreadableRecordCount }

    /// The records counted in ``unreadableRecordCount`` (the first 100), each with why.
    public var unreadableRecords: [String] { diagnostics.unreadableRecords }

    /// Runs `PRAGMA integrity_check` and returns its findings (`["ok"]` when the file is sound).
    public func integrityCheck() throws -> [String] {
        try database.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
    }

    // MARK: - Accounts

    @discardableResult public func setAccount(account: Account) -> Bool {
        attempt("setAccount") {
            let details = try sealedDetails([account])[0]
            try database.write { db in try Self.upsert(account, details: details, in: db) }
            return true
        } ?? false
    }

    /// Removes the account when it owns no mechanism any more; one that still does (perhaps an
    /// unreadable one) is left, with ``StorageClientError/stillOwnsRecords(what:count:)`` in
    /// ``lastError``: remove its mechanisms first, as ``AuthenticatorClient`` does.
    @discardableResult public func removeAccount(account: Account) -> Bool {
        attempt("removeAccount") {
            try database.write { db in
                let owned = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM mechanism WHERE issuer = ? AND accountName = ?",
                                             arguments: [account.issuer, account.accountName]) ?? 0
                guard owned == 0 else {
                    throw StorageClientError.stillOwnsRecords(what: "The account \(account.issuer): \(account.accountName)", count: owned)
                }
                try db.execute(sql: "DELETE FROM account WHERE issuer = ? AND accountName = ?",
                               arguments: [account.issuer, account.accountName])
                return db.changesCount > 0
            }
        } ?? false
    }

    /// Reads, changes and writes the account in one write transaction (see the requirement).
    @discardableResult
    public func updateAccount(accountIdentifier: String, _ change: (inout Account) throws -> Void) throws -> Account {
        try diagnostics.attemptThrowing("updateAccount") {
            let parts = IdentifierCoding.split(accountIdentifier)
            guard parts.count == 2 else { throw StorageClientError.accountNotFound(identifier: accountIdentifier) }
            return try database.write { db in
                guard let row = try Row.fetchOne(db.cachedStatement(sql: AccountRow.select + "WHERE issuer = ? AND accountName = ?"),
                                                 arguments: [parts[0], parts[1]]) else {
                    throw StorageClientError.accountNotFound(identifier: accountIdentifier)
                }
                guard let stored = accounts([row], operation: "updateAccount").first else {
                    throw diagnostics.lastError ?? StorageClientError.accountNotFound(identifier: accountIdentifier)
                }
                let account = try stored.changed(by: change)
                // Unchanged details keep their sealed bytes (bound to the account, which cannot change).
                let details: Data? = account.details == stored.details ? row[AccountRow.detailsColumn] as Data? : try sealedDetails([account])[0]
                try Self.upsert(account, details: details, in: db)
                return account
            }
        }
    }

    public func getAccount(accountIdentifier: String) -> Account? {
        let parts = IdentifierCoding.split(accountIdentifier)
        guard parts.count == 2 else { return nil }
        return attempt("getAccount") {
            try database.read { db in
                try Row.fetchOne(db.cachedStatement(sql: AccountRow.select + "WHERE issuer = ? AND accountName = ?"), arguments: [parts[0], parts[1]])
            }
        }?.flatMap { row in accounts([row], operation: "getAccount").first }
    }

    /// Every account. Mechanisms that no account reaches (their account row was deleted or
    /// changed behind the client's back, with foreign keys off) are counted in
    /// ``unreadableRecordCount`` here, so a listing never silently leaves them out
    /// (``getAllNotifications()`` does the same for notifications without their mechanism).
    public func getAllAccounts() -> [Account] {
        let found = attempt("getAllAccounts") {
            try database.read { db in
                (try Row.fetchAll(db, sql: AccountRow.select + AccountRow.listingOrder),
                 try String.fetchAll(db, sql: """
                    SELECT 'mechanism ' || CAST(mechanismUUID AS TEXT) FROM mechanism m
                    WHERE NOT EXISTS (SELECT 1 FROM account a WHERE a.issuer = m.issuer AND a.accountName = m.accountName)
                    """))
            }
        }
        guard let (rows, orphans) = found else { return [] }
        countOrphans(orphans, "getAllAccounts", owner: "account")
        return accounts(rows, operation: "getAllAccounts")
    }

    /// Every account's names: four columns, in the order of ``getAllAccounts()``. A row whose
    /// names are not text is counted unreadable and left out, as by ``getAllAccounts()``.
    public func getAllAccountNames() -> [AccountNames] {
        attempt("getAllAccountNames") {
            try database.read { db in
                let rows = try Row.fetchCursor(db.cachedStatement(sql: AccountRow.selectNames + AccountRow.listingOrder))
                var names: [AccountNames] = []
                while let row = try rows.next() {
                    if let read = readable("getAllAccountNames", row.recordName("account", key: "issuer"), { try AccountNames(row, store: path) }) {
                        names.append(read)
                    }
                }
                return names
            }
        } ?? []
    }

    /// Counts records that nothing owns any more as unreadable.
    private func countOrphans(_ orphans: [String], _ operation: String, owner: String) {
        for orphan in orphans {
            _ = readable(operation, orphan) { () throws -> Void in
                throw StorageError.corrupted(location: "\(path) \(orphan)", reason: "no \(owner) owns it (its \(owner) row was deleted or changed)")
            }
        }
    }

    // MARK: - Mechanisms

    @discardableResult public func setMechanism(mechanism: Mechanism) -> Bool {
        attempt("setMechanism") {
            let sealed = try seal(mechanism)
            try database.write { db in try Self.write(sealed, in: db, insertOnly: false) }
            return true
        } ?? false
    }

    /// Removes the mechanism when it owns no notification any more (see
    /// ``removeAccount(account:)``).
    /// Removes the mechanism in one statement, only if its counter is still `mechanism.counter`.
    public func removeMechanismIfUnchanged(_ mechanism: Mechanism) throws -> Bool {
        try diagnostics.attemptThrowing("removeMechanismIfUnchanged") {
            try database.write { db in
                let owned = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notification WHERE mechanismUUID = ?",
                                             arguments: [mechanism.mechanismUUID]) ?? 0
                guard owned == 0 else {
                    throw StorageClientError.stillOwnsRecords(what: "The mechanism \(mechanism.mechanismUUID)", count: owned)
                }
                try db.execute(sql: "DELETE FROM mechanism WHERE mechanismUUID = ? AND counter = ?",
                               arguments: [mechanism.mechanismUUID, Int64(bitPattern: mechanism.counter)])
                if db.changesCount > 0 { return true }
                guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM mechanism WHERE mechanismUUID = ?)",
                                        arguments: [mechanism.mechanismUUID]) == true else {
                    throw StorageClientError.mechanismNotFound(uuid: mechanism.mechanismUUID)
                }
                return false
            }
        }
    }

    @discardableResult public func removeMechanism(mechanism: Mechanism) -> Bool {
        attempt("removeMechanism") {
            try database.write { db in
                let owned = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notification WHERE mechanismUUID = ?",
                                             arguments: [mechanism.mechanismUUID]) ?? 0
                guard owned == 0 else {
                    throw StorageClientError.stillOwnsRecords(what: "The mechanism \(mechanism.mechanismUUID)", count: owned)
                }
                try db.execute(sql: "DELETE FROM mechanism WHERE mechanismUUID = ?", arguments: [mechanism.mechanismUUID])
                return db.changesCount > 0
            }
        } ?? false
    }

    public func insertMechanism(_ mechanism: Mechanism) throws {
        try diagnostics.attemptThrowing("insertMechanism") {
            let sealed = try seal(mechanism)
            try database.write { db in try Self.write(sealed, in: db, insertOnly: true) }
        }
    }

    /// Claims the next HOTP counter value by compare-and-swap: the row is read and opened, the
    /// secret re-sealed under the next counter (it is bound to it), and the row updated only if
    /// its counter and sealed secret are still the ones read. A process that lost the race
    /// reads again. No two callers, in any process, get the same value.
    public func advanceCounter(mechanismUUID uuid: String) throws -> Mechanism {
        try diagnostics.attemptThrowing("advanceCounter") {
            var previous: MechanismRow?
            while true {
                guard let row = try database.read({ try Row.fetchOne($0.cachedStatement(sql: MechanismRow.select + "WHERE mechanismUUID = ?"), arguments: [uuid]) }) else {
                    throw StorageClientError.mechanismNotFound(uuid: uuid)
                }
                let stored = try MechanismRow(row, store: path)
                if let previous, previous.counter == stored.counter, previous.secret == stored.secret {
                    // The update matched nothing, yet nobody moved the row (a trigger swallows it).
                    throw StorageClientError.failed(operation: "advance the HOTP counter of \(uuid): the update matched no row "
                        + "although nobody else moved it; no code was issued", cause: nil)
                }
                previous = stored
                let current = try mechanism(stored, OpenedFields(sealer, sealedFields(of: stored)))
                var advanced = current
                advanced.counter = try current.nextCounter()
                let sealed = try seal(advanced)
                let swapped = try database.write { db in
                    try db.execute(sql: """
                        UPDATE mechanism SET counter = ?, secret = ?, binding = ?
                        WHERE mechanismUUID = ? AND counter = ? AND secret = ?
                        """, arguments: [Int64(bitPattern: advanced.counter), sealed.secret, MechanismBinding.full,
                                     uuid, stored.counter, stored.secret])
                    return db.changesCount == 1
                }
                if swapped { return current }
            }
        }
    }

    public func getMechanismsForAccount(account: Account) -> [Mechanism] {
        readMechanisms("getMechanismsForAccount", sql: "WHERE issuer = ? AND accountName = ? ORDER BY timeAdded, mechanismUUID",
                       arguments: [account.issuer, account.accountName])
    }

    public func getMechanismForUUID(uuid: String) -> Mechanism? {
        readMechanisms("getMechanismForUUID", sql: "WHERE mechanismUUID = ?", arguments: [uuid]).first
    }

    // MARK: - Notifications

    @discardableResult public func setNotification(notification: PushNotification) -> Bool {
        attempt("setNotification") {
            let sealed = try seal(notification)
            try database.write { db in try Self.upsert(sealed, in: db) }
            return true
        } ?? false
    }

    @discardableResult public func removeNotification(notification: PushNotification) -> Bool {
        attempt("removeNotification") {
            try database.write { db in
                try db.execute(sql: "DELETE FROM notification WHERE mechanismUUID = ? AND messageId = ?",
                               arguments: [notification.mechanismUUID, notification.messageId])
                return db.changesCount > 0
            }
        } ?? false
    }

    public func getAllNotificationsForMechanism(mechanism: Mechanism) -> [PushNotification] {
        readNotifications("getAllNotificationsForMechanism", sql: "WHERE mechanismUUID = ? ORDER BY timeAdded, messageId",
                          arguments: [mechanism.mechanismUUID])
    }

    public func getNotification(messageId: String, mechanism: Mechanism) -> PushNotification? {
        readNotifications("getNotification", sql: "WHERE mechanismUUID = ? AND messageId = ?",
                          arguments: [mechanism.mechanismUUID, messageId]).first
    }

    /// Every notification; those whose mechanism row is gone are counted as unreadable.
    public func getAllNotifications() -> [PushNotification] {
        let orphans = attempt("getAllNotifications") {
            try database.read { db in
                try String.fetchAll(db, sql: """
                    SELECT 'notification ' || CAST(messageId AS TEXT) FROM notification n
                    WHERE NOT EXISTS (SELECT 1 FROM mechanism m WHERE m.mechanismUUID = n.mechanismUUID)
                    """)
            }
        } ?? []
        countOrphans(orphans, "getAllNotifications", owner: "mechanism")
        return readNotifications("getAllNotifications", sql: "ORDER BY timeAdded, messageId", arguments: [])
    }

    @discardableResult public func isEmpty() -> Bool {
        attempt("isEmpty") {
            try database.read { db in
                try Bool.fetchOne(db, sql: """
                    SELECT NOT EXISTS (SELECT 1 FROM account) AND NOT EXISTS (SELECT 1 FROM mechanism)
                       AND NOT EXISTS (SELECT 1 FROM notification)
                    """) ?? true
            }
        } ?? false
    }

    // MARK: - Many records at once

    /// Writes many records in one transaction: either all of them are stored or none is, and the
    /// error says why.
    ///
    /// For imports, migrations and tests at scale: far faster than one call per record, because
    /// the file is synchronised once. Each record is written exactly as ``setAccount(account:)``,
    /// ``setMechanism(mechanism:)`` and ``setNotification(notification:)`` would write it;
    /// accounts first, then mechanisms, then notifications.
    public func storeAll(accounts: [Account] = [], mechanisms: [Mechanism] = [], notifications: [PushNotification] = []) throws {
        let sealedMechanisms = try seal(mechanisms)
        try requireKey()
        let sealedNotifications = try zip(notifications, sealer.seal(notifications.map { ($0.challenge, Self.field($0)) }))
            .map { SealedNotification(notification: $0, challenge: $1) }
        let sealedDetails = try sealedDetails(accounts)
        try database.write { db in
            for (account, details) in zip(accounts, sealedDetails) { try Self.upsert(account, details: details, in: db) }
            for mechanism in sealedMechanisms { try Self.write(mechanism, in: db, insertOnly: false) }
            for notification in sealedNotifications { try Self.upsert(notification, in: db) }
        }
    }

    // MARK: - Push device token

    @discardableResult public func setPushDeviceToken(_ token: PushDeviceToken) -> Bool {
        attempt("setPushDeviceToken") {
            try database.write { db in
                try db.execute(sql: "INSERT OR REPLACE INTO pushDeviceToken (id, tokenId, timeAdded) VALUES (1, ?, ?)",
                               arguments: [token.tokenId, token.timeAdded.timeIntervalSinceReferenceDate])
            }
            return true
        } ?? false
    }

    public func getPushDeviceToken() -> PushDeviceToken? {
        attempt("getPushDeviceToken") {
            try database.read { db in
                try Row.fetchOne(db, sql: "SELECT tokenId, timeAdded FROM pushDeviceToken WHERE id = 1").map {
                    PushDeviceToken(tokenId: try $0.checked("tokenId", in: "\(path) push device token"),
                                    timeAdded: Date(timeIntervalSinceReferenceDate: try $0.checked("timeAdded", in: "\(path) push device token")))
                }
            }
        } ?? nil
    }

    @discardableResult public func removePushDeviceToken() -> Bool {
        attempt("removePushDeviceToken") {
            try database.write { db in
                try db.execute(sql: "DELETE FROM pushDeviceToken")
                return db.changesCount > 0
            }
        } ?? false
    }

    // MARK: - Writing rows

    /// A mechanism with its secret fields sealed, ready to be written.
    private struct SealedMechanism {
        var mechanism: Mechanism
        var secret: Data
        var challenge: Data?
    }

    /// A notification with its challenge sealed, ready to be written.
    private struct SealedNotification {
        var notification: PushNotification
        var challenge: Data
    }

    private func seal(_ mechanism: Mechanism) throws -> SealedMechanism {
        try seal([mechanism])[0]
    }

    /// Seals the mechanisms' secrets and challenges in one trip to the encryptor.
    private func seal(_ mechanisms: [Mechanism]) throws -> [SealedMechanism] {
        try requireKey()
        var fields: [(text: String, field: String)] = []
        for mechanism in mechanisms {
            let field = Self.field(mechanism: mechanism.mechanismUUID)
            fields.append((mechanism.secret, MechanismBinding.secretIdentity(mechanism)))
            if let challenge = mechanism.challenge { fields.append((challenge, "\(field)/challenge")) }
        }
        var sealed = try sealer.seal(fields)[...]
        return mechanisms.map { mechanism in
            let secret = sealed.removeFirst()
            return SealedMechanism(mechanism: mechanism, secret: secret, challenge: mechanism.challenge.map { _ in sealed.removeFirst() })
        }
    }

    private func seal(_ notification: PushNotification) throws -> SealedNotification {
        try requireKey()
        return SealedNotification(notification: notification, challenge: try sealer.seal(notification.challenge, for: Self.field(notification)))
    }

    /// Writes the account row; `details` is its sealed ``AccountDetails`` (``sealedDetails(_:)``).
    private static func upsert(_ account: Account, details: Data?, in db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO account (issuer, accountName, displayIssuer, displayAccountName, imageURL, backgroundColor,
                                 timeAdded, policies, lockingPolicy, isLocked, details)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (issuer, accountName) DO UPDATE SET
                displayIssuer = excluded.displayIssuer, displayAccountName = excluded.displayAccountName,
                imageURL = excluded.imageURL, backgroundColor = excluded.backgroundColor,
                timeAdded = excluded.timeAdded, policies = excluded.policies,
                lockingPolicy = excluded.lockingPolicy, isLocked = excluded.isLocked, details = excluded.details
            """).execute(arguments: [account.issuer, account.accountName, account.displayIssuer, account.displayAccountName,
                                     account.imageURL, account.backgroundColor, account.timeAdded.timeIntervalSinceReferenceDate,
                                     account.policies, account.lockingPolicy, account.isLocked, details])
    }

    /// Writes a mechanism, creating its account (with no display details) when there is none.
    ///
    /// Never replaces another object: with `insertOnly` the row must be new; otherwise it may
    /// also update the row with the same UUID, account and type. Any other clash (the UUID
    /// taken by another account or type, or the account already having that type under another
    /// UUID) throws and writes nothing.
    private static func write(_ sealed: SealedMechanism, in db: Database, insertOnly: Bool) throws {
        let mechanism = sealed.mechanism
        try db.cachedStatement(sql: """
            INSERT INTO account (issuer, accountName, timeAdded, isLocked) VALUES (?, ?, ?, 0)
            ON CONFLICT (issuer, accountName) DO NOTHING
            """).execute(arguments: [mechanism.issuer, mechanism.accountName, mechanism.timeAdded.timeIntervalSinceReferenceDate])
        let insert = """
            INSERT INTO mechanism (mechanismUUID, issuer, accountName, type, secret, algorithm, digits, period,
                counter, uid, resourceId, timeAdded, registrationEndpoint, authenticationEndpoint, messageId, challenge, binding)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        let update = """
             ON CONFLICT (mechanismUUID) DO UPDATE SET
                secret = excluded.secret, algorithm = excluded.algorithm, digits = excluded.digits, period = excluded.period,
                counter = excluded.counter, uid = excluded.uid, resourceId = excluded.resourceId, timeAdded = excluded.timeAdded,
                registrationEndpoint = excluded.registrationEndpoint, authenticationEndpoint = excluded.authenticationEndpoint,
                messageId = excluded.messageId, challenge = excluded.challenge, binding = excluded.binding
             WHERE mechanism.issuer = excluded.issuer AND mechanism.accountName = excluded.accountName AND mechanism.type = excluded.type
            """
        do {
            try db.cachedStatement(sql: insertOnly ? insert : insert + update).execute(arguments: [
                mechanism.mechanismUUID, mechanism.issuer, mechanism.accountName, mechanism.type.rawValue,
                sealed.secret, mechanism.algorithm.rawValue, mechanism.digits, mechanism.period,
                Int64(bitPattern: mechanism.counter), mechanism.uid, mechanism.resourceId,
                mechanism.timeAdded.timeIntervalSinceReferenceDate, mechanism.registrationEndpoint?.absoluteString,
                mechanism.authenticationEndpoint?.absoluteString, mechanism.messageId, sealed.challenge, MechanismBinding.full])
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw try clash(for: mechanism, in: db) ?? error
        }
        // The update's WHERE did not hold: the UUID belongs to another account or type.
        if db.changesCount == 0 { throw StorageClientError.uuidTaken(uuid: mechanism.mechanismUUID) }
    }

    /// Which stored row `mechanism` clashes with.
    private static func clash(for mechanism: Mechanism, in db: Database) throws -> StorageClientError? {
        let sameType = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM mechanism WHERE issuer = ? AND accountName = ? AND type = ?)",
                                         arguments: [mechanism.issuer, mechanism.accountName, mechanism.type.rawValue]) ?? false
        if sameType { return .mechanismExists(issuer: mechanism.issuer, accountName: mechanism.accountName, type: mechanism.type) }
        let taken = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM mechanism WHERE mechanismUUID = ?)",
                                      arguments: [mechanism.mechanismUUID]) ?? false
        return taken ? .uuidTaken(uuid: mechanism.mechanismUUID) : nil
    }

    private static func upsert(_ sealed: SealedNotification, in db: Database) throws {
        let notification = sealed.notification
        try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO notification (mechanismUUID, messageId, challenge, ttl, timeAdded, pending, approved,
                loadBalanceKey, message, customPayload, numbersChallenge, contextInfo, pushType)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [
                notification.mechanismUUID, notification.messageId, sealed.challenge, notification.ttl,
                notification.timeAdded.timeIntervalSinceReferenceDate, notification.pending, notification.approved,
                notification.loadBalanceKey, notification.message, notification.customPayload,
                notification.numbersChallenge, notification.contextInfo, notification.pushType])
    }

    // MARK: - Reading rows

    private func readMechanisms(_ operation: String, sql: String, arguments: StatementArguments) -> [Mechanism] {
        let rows = attempt(operation) { try database.read { try Row.fetchAll($0.cachedStatement(sql: MechanismRow.select + sql), arguments: arguments) } } ?? []
        // A row whose columns cannot even be decoded is counted now and left out of the batch.
        let decoded = rows.compactMap { row in readable(operation, row.recordName("mechanism", key: "mechanismUUID")) { try MechanismRow(row, store: path) } }
        let opened = OpenedFields(sealer, decoded.flatMap(sealedFields(of:)))
        return decoded.compactMap { row in readable(operation, "mechanism \(row.uuid)") { try mechanism(row, opened) } }
    }

    private func readNotifications(_ operation: String, sql: String, arguments: StatementArguments) -> [PushNotification] {
        let rows = attempt(operation) { try database.read { try Row.fetchAll($0.cachedStatement(sql: NotificationRow.select + sql), arguments: arguments) } } ?? []
        let decoded = rows.compactMap { row in readable(operation, row.recordName("notification", key: "messageId")) { try NotificationRow(row, store: path) } }
        let opened = OpenedFields(sealer, decoded.map { ($0.sealedChallenge, Self.field($0.notification)) })
        return decoded.compactMap { row in
            readable(operation, "notification \(row.notification.messageId)") {
                var notification = row.notification
                notification.challenge = try opened.text(Self.field(notification))
                return notification
            }
        }
    }

    /// A mechanism row's sealed fields, each with the identity it must open under.
    func sealedFields(of row: MechanismRow) -> [(sealed: Data, field: String)] {
        var fields = [(row.secret, MechanismBinding.secretIdentity(row))]
        if let challenge = row.challenge { fields.append((challenge, "\(Self.field(mechanism: row.uuid))/challenge")) }
        return fields
    }

    private func mechanism(_ row: MechanismRow, _ opened: OpenedFields) throws -> Mechanism {
        let field = Self.field(mechanism: row.uuid)
        return try row.stored.mechanism(secret: try opened.text(MechanismBinding.secretIdentity(row)),
                                        challenge: try row.challenge.map { _ in try opened.text("\(field)/challenge") },
                                        location: "\(path) \(field)")
    }

    /// Where a mechanism's sealed fields belong: `mechanism/<uuid>` (then `/secret`, `/challenge`).
    private static func field(mechanism uuid: String) -> String { "mechanism/\(uuid)" }

    static func field(_ notification: PushNotification) -> String {
        field(notification: notification.mechanismUUID, messageId: notification.messageId)
    }

    /// Where a notification's sealed challenge belongs.
    private static func field(notification mechanismUUID: String, messageId: String) -> String {
        "notification/\(mechanismUUID)/\(messageId)/challenge"
    }

    // MARK: - Failures

    private func attempt<R>(_ operation: String, _ body: () throws -> R) -> R? {
        diagnostics.attempt(operation, body)
    }

    func readable<R>(_ operation: String, _ record: @autoclosure () -> String, _ body: () throws -> R) -> R? {
        diagnostics.readable(operation, record(), body)
    }

}
