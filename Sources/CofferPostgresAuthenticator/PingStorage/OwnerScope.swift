import CofferPostgres
import CofferMFAEngine
import CofferStorage
import Foundation
import PostgresNIO

/// One owner's part of the database, as the storages of Ping's APIs (``PostgresOathStorage``,
/// ``PostgresPushStorage``) use it: every sealed field bound to the owner first (``OwnerBinding``),
/// then to its row; every write one transaction that stores what it sealed only under the key
/// ring's newest key (``KeyRingCheck``), after checking that this instance's key-encryption key
/// opens the ring.
struct OwnerScope: Sendable {
    let database: CofferDatabase
    let owner: String
    let keys: DatabaseKeyStore
    let keyAlias: String
    let sealer: FieldSealer

    /// `owner`'s part, sealed under the database's shared key ring.
    init(database: CofferDatabase, owner: String, keyAlias: String) {
        self.init(database: database, owner: owner, keys: database.keys, keyAlias: keyAlias)
    }

    /// `owner`'s part, sealed under a key ring of the owner's own, wrapped under `keyEncryptionKey`.
    init(database: CofferDatabase, owner: String, keyEncryptionKey: KeyEncryptionKey, keyAlias: String) throws {
        guard !owner.isEmpty else {
            throw PostgresStorageError.invalidConfiguration("an owner with a key ring of its own needs a name (the empty name is the shared ring's)")
        }
        self.init(database: database, owner: owner, keys: database.keyStore(owner: owner, keyEncryptionKey: keyEncryptionKey), keyAlias: keyAlias)
    }

    private init(database: CofferDatabase, owner: String, keys: DatabaseKeyStore, keyAlias: String) {
        self.database = database
        self.owner = owner
        self.keys = keys
        self.keyAlias = keyAlias
        sealer = FieldSealer(encryptor: AESGCMEncryptor(keyAlias: keyAlias, keyStore: keys))
    }

    /// The identity a field is sealed under: the owner, then the row's own identity.
    func field(_ identity: String) -> String {
        OwnerBinding.scope(owner) + identity
    }

    /// One statement's rows, under the database's deadline.
    func read(_ operation: String, _ query: PostgresQuery) async throws -> [PostgresRow] {
        try await database.read(operation, query)
    }

    /// Opens sealed fields, each under the owner and its row's identity; each succeeds or fails
    /// on its own. The database failing to give a key (down, another key-encryption key) is
    /// thrown: that is not a damaged record.
    func open(_ fields: [(sealed: Data, identity: String)]) async throws -> [Result<String, any Error>] {
        let results = await sealer.opening(fields.map { ($0.sealed, field($0.identity)) })
        for case .failure(let error) in results {
            if let cause = PostgresStorageError.databaseCause(of: error) { throw cause }
        }
        return results
    }

    /// Seals `fields` (each under the owner and its identity) and runs `body` with them in one
    /// transaction, which first checks that they are under the key ring's newest key; sealed
    /// again and retried when a rotation came between. Nothing is written with a
    /// key-encryption key that does not open the ring.
    func write<R: Sendable>(_ operation: String, sealing fields: [(text: String, identity: String)] = [],
                            _ body: @escaping @Sendable (PostgresConnection, [Data]) async throws -> R) async throws -> R {
        let keys = self.keys, keyAlias = self.keyAlias, logger = database.logger
        return try await KeyRingCheck.retrying(alias: keyAlias, keys: keys, during: operation) {
            _ = try await keys.primaryKey(for: keyAlias)
            let sealed: [Data]
            do {
                sealed = try await sealer.sealing(fields.map { ($0.text, field($0.identity)) })
            } catch {
                throw PostgresStorageError.databaseCause(of: error) ?? error
            }
            return try await database.write(operation) { connection in
                try await KeyRingCheck.require(sealed, alias: keyAlias, of: keys, on: connection, logger: logger)
                return try await body(connection, sealed)
            }
        }
    }

    /// Runs one statement on `connection` within a write, reading all its rows.
    @discardableResult
    func run(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [PostgresRow] {
        try await connection.rows(query, logger: database.logger)
    }
}
