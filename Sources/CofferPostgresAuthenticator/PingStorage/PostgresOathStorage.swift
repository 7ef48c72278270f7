import CofferPostgres
import CofferMFACommons
import CofferOath
import CofferStorage
import Foundation
import PostgresNIO

/// Ping's `OathStorage` on PostgreSQL: one owner's OATH credentials (a user of your service),
/// in a table that many owners and many instances share (`coffer_oath_credentials`, Android's
/// columns with `owner` in front).
///
/// What it promises:
/// - The secret is sealed with AES-256-GCM under the database's key ring (the shared one, or the
///   owner's own: ``init(database:owner:keyEncryptionKey:keyAlias:logger:)``) and bound to the
///   owner, its row and the columns that decide which code it makes under which name. A row
///   moved to another owner, copied onto another id, or with its counter rolled back or its
///   issuer swapped does not open: `OathStorageError.storageCorrupted(_:)` for that credential,
///   logged and skipped in listings.
/// - The HOTP counter moves by compare-and-swap in one statement
///   (`advanceOathCounter(credentialId:check:)`): no two callers, on any instance, get the
///   same counter.
/// - Every query is scoped to ``owner``; with row-level security (schema version 2 and later) a
///   database role other than the tables' owner sees only the rows of its own name.
/// - A database that cannot be reached, or a key-encryption key that does not open the ring,
///   fails the call with `OathStorageError.storageFailure(_:_:)` carrying the
///   `PostgresStorageError`; it is never taken for a missing or damaged credential.
///
/// ```swift
/// let storage = PostgresOathStorage(database: database, owner: user.id)
/// let client = try await OathClient.createClient { config in
///     config.storage = storage
/// }
/// ```
public final class PostgresOathStorage: OathCounterStorage, CustomReflectable {
    /// The key ring alias the storage seals under unless told otherwise (the authenticator's).
    public static let defaultKeyAlias = PostgresStorageClient.defaultKeyAlias

    let scope: OwnerScope
    private let logger: any CofferMFACommons.Logger

    /// Whose credentials these are.
    public var owner: String { scope.owner }
    /// The key ring in `coffer_keys` that seals the secrets.
    public var keyAlias: String { scope.keyAlias }
    /// Whether the secrets are sealed under a key ring of the owner's own.
    public var hasOwnKeyRing: Bool { !scope.keys.ringOwner.isEmpty }

    /// The owner and the key alias: never a credential or a secret.
    public var customMirror: Mirror {
        Mirror(self, children: ["owner": owner, "keyAlias": keyAlias, "hasOwnKeyRing": hasOwnKeyRing], displayStyle: .class)
    }

    /// `owner`'s credentials in `database` (running and migrated: `CofferDatabase/run()`,
    /// `CofferDatabase/migrate()`), sealed under the database's shared key ring: whoever holds
    /// the instances' key-encryption key opens every owner's secrets (a server acting for its users).
    ///
    /// - Parameters:
    ///   - database: The shared database.
    ///   - owner: Whose credentials; every query is scoped to it.
    ///   - keyAlias: The key ring in `coffer_keys` that seals the secrets.
    ///   - logger: Told of every row a listing skips (never a secret); default `LogManager.logger`.
    public init(database: CofferDatabase, owner: String, keyAlias: String = defaultKeyAlias,
                logger: (any CofferMFACommons.Logger)? = nil) {
        scope = OwnerScope(database: database, owner: owner, keyAlias: keyAlias)
        self.logger = logger ?? LogManager.logger
    }

    /// `owner`'s credentials sealed under a key ring of the owner's own, wrapped under
    /// `keyEncryptionKey`: someone with the owner's name, a database login and another
    /// key-encryption key opens nothing and writes nothing.
    ///
    /// - Throws: `PostgresStorageError` `.invalidConfiguration` for an empty owner.
    public init(database: CofferDatabase, owner: String, keyEncryptionKey: KeyEncryptionKey, keyAlias: String = defaultKeyAlias,
                logger: (any CofferMFACommons.Logger)? = nil) throws {
        scope = try OwnerScope(database: database, owner: owner, keyEncryptionKey: keyEncryptionKey, keyAlias: keyAlias)
        self.logger = logger ?? LogManager.logger
    }

    /// Stores the credential, replacing the owner's credential with the same id.
    public func storeOathCredential(_ credential: OathCredential) async throws {
        let owner = owner
        try await run("store credential") {
            try await scope.write("store an OATH credential", sealing: [(credential.secret, credential.sealedSecretIdentity)]) { connection, sealed in
                try await self.scope.run(try OathRow.upsert(credential, sealed: sealed[0], owner: owner), on: connection)
            }
        }
    }

    /// The credential, or `nil`; one whose row does not open is `OathStorageError.storageCorrupted(_:)`.
    public func retrieveOathCredential(credentialId: String) async throws -> OathCredential? {
        try await run("retrieve credential") {
            let rows = try await scope.read("read an OATH credential",
                                            "\(unescaped: OathRow.select)WHERE owner = \(owner) AND id = \(credentialId)")
            guard let row = rows.first else { return nil }
            return try await open([try OathRow(row)])[0].get()
        }
    }

    /// Every readable credential, oldest first; a row that cannot be read is logged and skipped.
    public func getAllOathCredentials() async throws -> [OathCredential] {
        try await run("retrieve credentials") {
            let rows = try await scope.read("read the OATH credentials",
                                            "\(unescaped: OathRow.select)WHERE owner = \(owner) ORDER BY created_at, id COLLATE \"C\"")
            var readable: [OathRow] = []
            for row in rows {
                do { readable.append(try OathRow(row)) } catch { logger.w("Skipped an OATH credential row that cannot be read", error: error) }
            }
            return try await open(readable).compactMap { result in
                do { return try result.get() } catch {
                    logger.w("Skipped an OATH credential whose secret does not open", error: error)
                    return nil
                }
            }
        }
    }

    /// Removes the credential; returns whether there was one.
    public func removeOathCredential(credentialId: String) async throws -> Bool {
        let owner = owner
        return try await run("remove credential") {
            try await scope.write("remove an OATH credential") { connection, _ in
                try await !self.scope.run("DELETE FROM coffer_oath_credentials WHERE owner = \(owner) AND id = \(credentialId) RETURNING 1",
                                          on: connection).isEmpty
            }
        }
    }

    /// Removes every credential of the owner.
    public func clearOathCredentials() async throws {
        let owner = owner
        try await run("clear credentials") {
            try await scope.write("remove the OATH credentials") { connection, _ in
                try await self.scope.run("DELETE FROM coffer_oath_credentials WHERE owner = \(owner)", on: connection)
            }
        }
    }

    /// Reads the row, changes it, and stores the change by compare-and-swap in one statement
    /// (only if the row is still as read: its counter and sealed secret), the secret sealed again
    /// under the new values; read again when another caller changed it first.
    public func updateOathCredential(credentialId: String, _ change: @Sendable (OathCredential) throws -> OathCredential) async throws -> OathCredential? {
        let owner = owner
        return try await run("store credential") {
            var previous: OathRow?
            while true {
                let rows = try await scope.read("read an OATH credential", "\(unescaped: OathRow.select)WHERE owner = \(owner) AND id = \(credentialId)")
                guard let first = rows.first else { return nil }
                let row = try OathRow(first)
                if let previous, previous.counter == row.counter, previous.sealed == row.sealed {
                    // The swap matched nothing, yet nobody moved the row: a policy or trigger swallows it.
                    throw OathStorageError.storageFailure("The credential \(credentialId) could not be updated: the update matched "
                        + "no row although nobody else changed it (a row security policy or a trigger on coffer_oath_credentials?); no code was issued.")
                }
                previous = row
                let current = try await open([row])[0].get()
                let next = try change(current)
                try current.requireSameCredential(next)
                let swapped = try await scope.write("update an OATH credential", sealing: [(next.secret, next.sealedSecretIdentity)]) { connection, sealed in
                    try await self.scope.run(try OathRow.update(next, sealed: sealed[0], owner: owner, ifCounter: row.counter, secret: row.sealed),
                                             on: connection)
                }
                if let stored = swapped.first {
                    guard try stored.decode(Int64.self) == Int64(next.counter) else {
                        throw OathStorageError.storageFailure("The database did not store the HOTP counter of \(credentialId) as written "
                            + "(a trigger or rule changed the update); no code was issued. Check the table coffer_oath_credentials.")
                    }
                    return current
                }
            }
        }
    }

    // MARK: - Rows

    /// The rows' credentials with their secrets opened; a secret that does not open under its
    /// row as it is reads as `OathStorageError.storageCorrupted(_:)`.
    private func open(_ rows: [OathRow]) async throws -> [Result<OathCredential, any Error>] {
        let opened = try await scope.open(rows.map { ($0.sealed, $0.credential.sealedSecretIdentity) })
        return zip(rows, opened).map { row, secret in
            secret.map { row.credential.withSecret($0) }.mapError { error in
                if case .identityMismatch? = error as? StorageError {
                    return OathStorageError.storageCorrupted("the secret of \(row.credential.id) does not belong to its row as it is "
                        + "(moved to another owner or row, or a column edited)")
                }
                return OathStorageError.storageCorrupted("the secret of \(row.credential.id) does not open (\(error))")
            }
        }
    }

    @discardableResult
    private func run<R>(_ operation: String, _ body: () async throws -> R) async throws -> R {
        do { return try await body() } catch let error as OathStorageError { throw error } catch let error as OathError { throw error } catch {
            throw OathStorageError.storageFailure("Failed to \(operation): \(error)", error)
        }
    }
}
