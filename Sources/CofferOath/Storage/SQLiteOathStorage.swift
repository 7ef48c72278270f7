import CofferMFACommons
import CofferMFAEngine
import CofferStorage
import Foundation
import GRDB

/// ``OathStorage`` on one SQLite file, through GRDB: Android's table (`mfa_oath_data`), with
/// what Android leaves in the clear sealed.
///
/// - The secret is sealed by the encryptor you give (for example
///   `AESGCMEncryptor(keyAlias:keyStore:)`) and bound to its row and to the columns that decide
///   which code it makes under which name (issuer, account, type, algorithm, digits, period,
///   counter): a secret copied to another row, or a row whose counter was rolled back or whose
///   issuer was swapped, does not open (``OathStorageError/storageCorrupted(_:)``).
/// - The HOTP counter moves by compare-and-swap (``advanceOathCounter(credentialId:check:)``):
///   processes sharing the file never get the same counter.
/// - The file is created 0600 in a 0700 directory, checked before use, in WAL mode with a busy
///   timeout, so several processes can share it; a file that is not Coffer's is refused.
/// - It remembers the highest counter of every HOTP secret it held (`HOTPCounterLedger`, one
///   sealed row), so ``OathClient`` never issues a code twice after a remove and re-add.
/// - Credentials are listed oldest first; a row that cannot be read is logged and skipped in
///   listings, and named by ``retrieveOathCredential(credentialId:)``.
public final class SQLiteOathStorage: OathCounterStorage {
    /// The database file.
    public let path: String
    let database: DatabasePool
    let sealer: FieldSealer
    private let logger: any CofferMFACommons.Logger
    /// How many rows a listing hands on at a time to be opened.
    let openingBatch: Int

    /// Opens (creating and migrating when needed) the database at `path`, sealing secrets with
    /// `encryptor`; rows a listing skips are logged to `logger` (default `LogManager.logger`).
    public convenience init(path: String, encryptor: any Encryptor, logger: (any CofferMFACommons.Logger)? = nil) throws {
        try self.init(path: path, encryptor: encryptor, logger: logger, openingBatch: 1_000)
    }

    /// The same, with listings opened in batches of `openingBatch` rows (tests use small ones).
    package init(path: String, encryptor: any Encryptor, logger: (any CofferMFACommons.Logger)?, openingBatch: Int) throws {
        self.openingBatch = max(1, openingBatch)
        self.path = path
        self.sealer = FieldSealer(encryptor: encryptor)
        self.logger = logger ?? LogManager.logger
        self.database = try SQLiteDatabaseFile.open(path: path, migrator: SQLiteOathSchema.migrator)
    }

    public func storeOathCredential(_ credential: OathCredential) async throws {
        try await run("store credential") {
            let sealed = try await sealer.sealing([(credential.secret, credential.sealedSecretIdentity)])[0]
            try await database.write { db in
                try db.execute(sql: """
                    INSERT INTO mfa_oath_data (id, user_id, resource_id, issuer, display_issuer, account_name, display_account_name,
                        type, secret, algorithm, digits, period, counter, created_at, image_url, background_color, policies,
                        locking_policy, is_locked)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET user_id = excluded.user_id, resource_id = excluded.resource_id,
                        issuer = excluded.issuer, display_issuer = excluded.display_issuer, account_name = excluded.account_name,
                        display_account_name = excluded.display_account_name, type = excluded.type, secret = excluded.secret,
                        algorithm = excluded.algorithm, digits = excluded.digits, period = excluded.period, counter = excluded.counter,
                        created_at = excluded.created_at, image_url = excluded.image_url, background_color = excluded.background_color,
                        policies = excluded.policies, locking_policy = excluded.locking_policy, is_locked = excluded.is_locked
                    """, arguments: Self.arguments(credential, sealed: sealed))
            }
        }
    }

    public func retrieveOathCredential(credentialId: String) async throws -> OathCredential? {
        try await run("retrieve credential") {
            guard let row = try await database.read({ db in try Self.stored(db, id: credentialId) }) else { return nil }
            return try await open(row)
        }
    }

    /// Every readable credential, oldest first; a row that cannot be read is skipped.
    public func getAllOathCredentials() async throws -> [OathCredential] {
        try await run("retrieve credentials") {
            // The reader decodes the rows in one cursor pass and hands them on in batches; each
            // batch's secrets are opened on the cooperative pool while the reader decodes the
            // next. On two cores the opens (two thirds of a 10,000-row listing, with the
            // identities they check) overlap the decoding instead of following it.
            let (batches, handOn) = AsyncStream.makeStream(of: Listing.self)
            let opened = try await withThrowingTaskGroup(of: [OpenedBatch].self) { group in
                group.addTask {
                    defer { handOn.finish() }
                    try await self.database.read { db in try Self.list(db, batchSize: self.openingBatch) { handOn.yield($0) } }
                    return []
                }
                for await batch in batches {
                    group.addTask { [await self.open(batch)] }
                }
                return try await group.reduce(into: []) { $0 += $1 }.sorted { $0.number < $1.number }
            }
            // A cancelled listing ends the stream, and batches handed on after that are dropped:
            // never a short list as if it were the whole one.
            try Task.checkCancellation()
            // Each credential is copied once, into the list, and its secret set where it lies.
            // (Moving them instead, by popping each batch from its end and turning the list
            // round, took more instructions than the copies: `reverse()` moves every element
            // again.)
            var credentials: [OathCredential] = []
            credentials.reserveCapacity(opened.reduce(0) { $0 + $1.listing.credentials.count })
            for batch in opened {
                for failure in batch.listing.unreadable {
                    logger.w("Skipped an OATH credential row that cannot be read (\(failure.id))", error: failure)
                }
                for (index, secret) in batch.secrets.enumerated() {
                    switch secret {
                    case .success(let text):
                        credentials.append(batch.listing.credentials[index])
                        credentials[credentials.count - 1].secretKey = text
                    case .failure(let error):
                        logger.w("Skipped an OATH credential whose secret does not open (\(batch.listing.credentials[index].id))", error: error)
                    }
                }
            }
            return credentials
        }
    }

    /// Opens the secrets of a batch. The identities each secret is bound to are worked out
    /// here, beside the opens, not on the reader: they cost as much as decoding the rows.
    private func open(_ listing: Listing) async -> OpenedBatch {
        let fields = listing.credentials.indices.map { (sealed: listing.sealed[$0], field: listing.credentials[$0].sealedSecretIdentity) }
        return OpenedBatch(number: listing.number, listing: listing, secrets: await sealer.opening(fields))
    }

    /// Reads every row in listing order in one cursor pass (a cursor decodes each row in
    /// place, where fetchAll would copy it first), handing the rows on in numbered batches of
    /// `batchSize` (the last may be smaller or empty).
    private static func list(_ db: Database, batchSize: Int, handOn: (Listing) -> Void) throws {
        var listing = Listing(number: 0, capacity: batchSize)
        let statement = try db.makeStatement(sql: StoredCredential.select + "ORDER BY created_at, id")
        let rows = try Row.fetchCursor(statement)
        while let row = try rows.next() {  // `rows` lives through the loop (it resets the statement when it goes)
            do {
                // Taken apart as it goes in: each part moves into its array, uncopied.
                let (credential, sealed) = try StoredCredential(currentRowOf: statement).parts()
                listing.sealed.append(sealed)
                listing.credentials.append(credential)
            } catch {
                listing.unreadable.append(UnreadableRow(id: String.fromDatabaseValue(row[0]) ?? "?", reason: "\(error)"))
            }
            if listing.credentials.count == batchSize {
                handOn(listing)
                listing = Listing(number: listing.number + 1, capacity: batchSize)
            }
        }
        handOn(listing)
    }

    public func removeOathCredential(credentialId: String) async throws -> Bool {
        try await run("remove credential") {
            try await database.write { db in
                try db.execute(sql: "DELETE FROM mfa_oath_data WHERE id = ?", arguments: [credentialId])
                return db.changesCount > 0
            }
        }
    }

    public func clearOathCredentials() async throws {
        try await run("clear credentials") {
            try await database.write { try $0.execute(sql: "DELETE FROM mfa_oath_data") }
        }
    }

    /// Reads the row, changes it, and stores the change by compare-and-swap (only if the row is
    /// still as read: its counter and sealed secret), the secret sealed again under the new
    /// values; read again when another process changed it first.
    public func updateOathCredential(credentialId: String, _ change: @Sendable (OathCredential) throws -> OathCredential) async throws -> OathCredential? {
        try await run("store credential") {
            while true {
                guard let row = try await database.read({ db in try Self.stored(db, id: credentialId) }) else { return nil }
                let current = try await open(row)
                let next = try change(current)
                try current.requireSameCredential(next)
                let sealed = try await sealer.sealing([(next.secret, next.sealedSecretIdentity)])[0]
                let oldSecret = row.sealed
                var arguments = Self.arguments(next, sealed: sealed)
                arguments += [credentialId, current.counter, oldSecret]
                let swapped = try await database.write { [arguments] db in
                    try db.execute(sql: """
                        UPDATE mfa_oath_data SET id = ?, user_id = ?, resource_id = ?, issuer = ?, display_issuer = ?, account_name = ?,
                            display_account_name = ?, type = ?, secret = ?, algorithm = ?, digits = ?, period = ?, counter = ?,
                            created_at = ?, image_url = ?, background_color = ?, policies = ?, locking_policy = ?, is_locked = ?
                        WHERE id = ? AND counter = ? AND secret = ?
                        """, arguments: arguments)
                    return db.changesCount == 1
                }
                if swapped { return current }
            }
        }
    }

    // MARK: - Rows

    private static func arguments(_ credential: OathCredential, sealed: Data) -> StatementArguments {
        [credential.id, credential.userId, credential.resourceId, credential.issuer, credential.displayIssuer, credential.accountName,
         credential.displayAccountName, credential.oathType.rawValue.uppercased(), sealed, credential.algorithm, credential.digits,
         credential.period, credential.counter, credential.createdAt.timeIntervalSinceReferenceDate, credential.imageURL,
         credential.backgroundColor, credential.policies, credential.lockingPolicy, credential.isLocked]
    }

    /// The stored row of credential `id`, or `nil`.
    private static func stored(_ db: Database, id: String) throws -> StoredCredential? {
        let statement = try db.cachedStatement(sql: StoredCredential.select + "WHERE id = ?")
        // The cursor resets the statement when it goes: it must outlive the reading.
        let rows = try Row.fetchCursor(statement, arguments: [id])
        return try withExtendedLifetime(rows) { try rows.next().map { _ in try StoredCredential(currentRowOf: statement) } }
    }

    /// The credential of `row`, its secret opened under the row's own binding.
    private func open(_ row: StoredCredential) async throws -> OathCredential {
        let credential = row.credential
        switch await sealer.opening([(row.sealed, credential.sealedSecretIdentity)])[0] {
        case .success(let secret): return credential.withSecret(secret)
        case .failure(let error):
            if case .identityMismatch? = error as? StorageError {
                throw OathStorageError.storageCorrupted("the secret of \(credential.id) does not belong to its row as it is (moved, or a column edited)")
            }
            throw error
        }
    }

    func run<R>(_ operation: String, _ body: () async throws -> R) async throws -> R {
        do { return try await body() } catch let error as OathStorageError { throw error } catch let error as OathError { throw error } catch {
            throw OathStorageError.storageFailure("Failed to \(operation)", error)
        }
    }
}

/// A row of `mfa_oath_data` as read: the credential without its secret, and the sealed secret.
private struct StoredCredential: Sendable {
    let credential: OathCredential
    let sealed: Data

    /// The credential and its sealed secret, the row given up.
    consuming func parts() -> (OathCredential, Data) { (credential, sealed) }

    /// The columns, in the order ``init(_:)`` reads them by position (by name, GRDB compares
    /// every column's name without case, which was most of the time a listing took).
    static let select = "SELECT id, user_id, resource_id, issuer, display_issuer, account_name, display_account_name, type, secret, "
        + "algorithm, digits, period, counter, created_at, image_url, background_color, policies, locking_policy, is_locked FROM mfa_oath_data "

    /// The row `statement` (a ``select``) stands on; a column of the wrong type or value is
    /// ``OathStorageError/storageCorrupted(_:)`` (never a trap: each value is converted by
    /// its type's own `fromDatabaseValue`, which answers `nil` rather than stopping).
    ///
    /// The values are read straight from `statement`, the row's own (GRDB's generic column
    /// decoding looked up type metadata at run time for every column of every row).
    init(currentRowOf statement: Statement) throws {
        func value(_ index: Int) -> DatabaseValue { DatabaseValue(sqliteStatement: statement.sqliteStatement, index: CInt(index)) }
        func text(_ index: Int) -> String? { String.fromDatabaseValue(value(index)) }
        func integer(_ index: Int) -> Int? { Int.fromDatabaseValue(value(index)) }
        let id = text(0) ?? ""
        guard let type = OathType(rawValue: (text(7) ?? "").lowercased()), let algorithm = OathAlgorithm(rawValue: text(9) ?? ""),
              let issuer = text(3), let accountName = text(5), let digits = integer(10), let period = integer(11), let counter = integer(12),
              let created = Double.fromDatabaseValue(value(13)), let sealed = Data.fromDatabaseValue(value(8)) else {
            throw OathStorageError.storageCorrupted("the row of \(id) has a column of the wrong type or value")
        }
        self.sealed = sealed
        credential = OathCredential(
            id: id, userId: text(1), resourceId: text(2), issuer: issuer, displayIssuer: text(4), accountName: accountName,
            displayAccountName: text(6), oathType: type, oathAlgorithm: algorithm, digits: digits, period: period, counter: counter,
            createdAt: Date(timeIntervalSinceReferenceDate: created), imageURL: text(14), backgroundColor: text(15), policies: text(16),
            lockingPolicy: text(17), isLocked: Bool.fromDatabaseValue(value(18)) ?? false, secretKey: "")
    }
}

/// A batch of a listing: its place among the batches, the credentials read with their secrets
/// still sealed, and the rows that could not be read.
private struct Listing: Sendable {
    let number: Int
    var credentials: [OathCredential] = []
    /// Each credential's sealed secret, in the same order.
    var sealed: [Data] = []
    var unreadable: [UnreadableRow] = []

    /// An empty batch with room for `capacity` rows.
    init(number: Int, capacity: Int) {
        self.number = number
        credentials.reserveCapacity(capacity)
        sealed.reserveCapacity(capacity)
    }
}

/// A batch of a listing once opened: the batch as read, and each credential's secret (or why
/// it did not open), in the same order.
private struct OpenedBatch: Sendable {
    let number: Int
    let listing: Listing
    let secrets: [Result<String, any Error>]
}

/// A row a listing could not read, and why.
private struct UnreadableRow: Error, Sendable, CustomStringConvertible {
    let id: String
    let reason: String
    var description: String { reason }
}
