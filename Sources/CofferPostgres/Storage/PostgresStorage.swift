import CofferStorage
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The `Storage` protocol on PostgreSQL: one sealed value per (namespace, key), for example
/// one token set per user session of a backend-for-frontend, shared by every instance.
///
/// The value is JSON, bound to its (namespace, key) and sealed with AES-256-GCM under the
/// database's key ring (``DatabaseKeyStore``), exactly as `EncryptedFileStorage` seals a
/// file: a row copied onto another key fails with `StorageError.identityMismatch`, a changed
/// byte with `.decryptionFailed`, and neither is ever returned or overwritten silently.
/// ``rotateKey()`` rotates the key ring all instances share.
///
/// With `CacheStrategy.cache`, a write by another instance reaches this one's memory copy
/// through the database's change channel (`LISTEN`/`NOTIFY`), normally within milliseconds.
/// While that channel is down (not yet connected, or the listening connection lost and being
/// made again) every `get` reads the database, and when it is up again every copy is
/// forgotten. What remains is the moment a notification takes to arrive: use
/// `CacheStrategy.noCache` where every read must see every other instance's last write.
public final class PostgresStorage<T: Codable & Sendable>: StorageDelegate<T>, @unchecked Sendable {
    // @unchecked Sendable: adds only immutable properties to StorageDelegate (which is safe).

    /// The namespace (a tenant, a kind of value).
    public let namespace: String
    /// The key within the namespace (a session id, a user id).
    public let key: String
    /// The encryptor that seals the value; its key store is the database's.
    public let encryptor: AESGCMEncryptor
    private let database: CofferDatabase
    private let subscription: UUID?

    /// A storage for the value at (`namespace`, `key`) in `database`.
    ///
    /// - Parameters:
    ///   - database: The shared database.
    ///   - namespace: The namespace (a tenant, a kind of value).
    ///   - key: The key within the namespace (a session id, a user id).
    ///   - keyAlias: The key ring's alias in the database. Defaults to `org.coffer.postgres.values`.
    ///   - cacheStrategy: How to keep a (plaintext) memory copy. Defaults to `CacheStrategy.noCache`.
    ///   - logger: Receives a line for every failure (never a value).
    public init(
        database: CofferDatabase, namespace: String, key: String, keyAlias: String = "org.coffer.postgres.values",
        cacheStrategy: CacheStrategy = .noCache, logger: Logger = Logger(label: "org.coffer.postgres.storage")
    ) {
        self.namespace = namespace
        self.key = key
        self.database = database
        let encryptor = AESGCMEncryptor(keyAlias: keyAlias, keyStore: database.keys)
        self.encryptor = encryptor
        let value = PostgresValue<T>(database: database, namespace: namespace, key: key, encryptor: encryptor)
        if cacheStrategy == .cache {
            // Registered before `self` exists; the closure finds it through the box.
            let box = WeakBox<PostgresStorage<T>>()
            subscription = database.changes.subscribe(to: .value(namespace: namespace, key: key)) { _ in await box.value?.forgetMemoryCopy() }
            super.init(delegate: value, cacheStrategy: cacheStrategy, logger: logger)
            box.value = self
        } else {
            subscription = nil
            super.init(delegate: value, cacheStrategy: cacheStrategy, logger: logger)
        }
    }

    deinit {
        if let subscription { database.changes.unsubscribe(subscription) }
    }

    /// Returns the stored value. With `CacheStrategy.cache`, from memory only while the
    /// database is listening for other instances' changes (``CofferDatabase/isListeningForChanges``).
    public override func get() async throws -> T? {
        if subscription != nil, !database.changes.isListening { await forgetMemoryCopy() }
        return try await super.get()
    }

    /// Adds a new primary key to the shared key ring and returns its id: every instance seals
    /// with it from its next operation on (see ``DatabaseKeyStore``); values sealed before still
    /// open, and each is sealed anew the next time it is saved.
    @discardableResult
    public func rotateKey() async throws -> UInt32 {
        try await encryptor.rotateKey()
    }
}

/// A weak reference, settable once the referent exists (the change subscription is made before
/// the storage it calls exists, and may call at any moment: the reference is behind a lock).
final class WeakBox<Value: AnyObject & Sendable>: Sendable {
    private struct Reference { weak var value: Value? }
    private let reference = Mutex(Reference())

    var value: Value? {
        get { reference.withLock { $0.value } }
        set { reference.withLock { $0.value = newValue } }
    }
}

/// The storage behind ``PostgresStorage``: one row of `coffer_values`.
struct PostgresValue<T: Codable & Sendable>: Storage {
    let database: CofferDatabase
    let namespace: String
    let key: String
    let encryptor: AESGCMEncryptor
    /// What the sealed value is bound to: the namespace and the key, unambiguously.
    let identity: String
    /// The payload of this value's change notifications (``ChangeNotice/tag(_:)``).
    private let changeTag: String

    /// The identity and the notification tag depend only on where the value is and on the
    /// database's key-encryption key, so they are worked out here once. A save and a read made
    /// three `JSONEncoder`s between them (3.5 µs each, measured) and an HMAC.
    init(database: CofferDatabase, namespace: String, key: String, encryptor: AESGCMEncryptor) {
        self.database = database
        self.namespace = namespace
        self.key = key
        self.encryptor = encryptor
        identity = String(decoding: (try? JSONEncoder().encode(["coffer_values", namespace, key])) ?? Data(), as: UTF8.self)
        changeTag = ChangeNotice.value(namespace: namespace, key: key).tag(database.configuration.keyEncryptionKey)
    }

    var location: String { "PostgreSQL value (namespace \(namespace), key \(key))" }

    func save(item: T) async throws {
        let json: Data
        do {
            json = try JSONEncoder().encode(item)
        } catch {
            throw StorageError.encodingFailed(type: String(describing: T.self), reason: "\(type(of: error))")
        }
        let namespace = self.namespace, key = self.key, alias = encryptor.keyAlias, notice = changeTag
        // Sealed under the key this instance believes is primary; the statement stores it only
        // if that is still the newest key in the ring, so a save that starts after another
        // instance's rotation was acknowledged never uses the old key (no extra round trip).
        try await KeyRingCheck.retrying(alias: alias, keys: database.keys, during: "save a value") {
            let sealed: Data
            do {
                sealed = try await encryptor.encrypt(data: IdentityBinding.wrap(json, identity: identity))
            } catch {
                throw Self.databaseCause(of: error) ?? error
            }
            let keyID = try KeyRingCheck.keyID(of: sealed)
            let rows = try await database.write("save a value", """
                WITH newest AS (SELECT coalesce(max(id), 0) AS id FROM coffer_keys WHERE owner = '' AND alias = \(alias)),
                saved AS (
                    INSERT INTO coffer_values (namespace, key, value) SELECT \(namespace), \(key), \(sealed) FROM newest WHERE id = \(Int(keyID))
                    ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = now()
                    RETURNING 1)
                SELECT pg_notify(\(CofferDatabase.changeChannel), \(notice)) FROM saved
                """)
            guard rows.count == 1 else { throw KeyRingCheck.stale }
        }
    }

    func get() async throws -> T? {
        let rows = try await database.read("read a value", "SELECT value FROM coffer_values WHERE namespace = \(namespace) AND key = \(key)")
        guard let row = rows.first else { return nil }
        let sealed = try row.decode(Data.self)
        let bound: Data
        do {
            bound = try await encryptor.decrypt(data: sealed)
        } catch {
            // The database could not give the key (down, another key-encryption key): say that,
            // not that the value is damaged.
            throw Self.databaseCause(of: error) ?? StorageError.decryptionFailed(location: location, cause: error)
        }
        let json = try IdentityBinding.unwrap(bound, identity: identity, location: location)
        do {
            return try JSONDecoder().decode(T.self, from: json)
        } catch {
            throw StorageError.corrupted(location: location, reason: "not a valid \(T.self)")
        }
    }

    /// The database's own error inside an encryptor's, if that is what it is.
    static func databaseCause(of error: any Error) -> PostgresStorageError? {
        PostgresStorageError.databaseCause(of: error)
    }

    func delete() async throws {
        let namespace = self.namespace, key = self.key, notice = changeTag
        try await database.write("delete a value", """
                WITH gone AS (DELETE FROM coffer_values WHERE namespace = \(namespace) AND key = \(key) RETURNING 1)
                SELECT pg_notify(\(CofferDatabase.changeChannel), \(notice)) FROM gone
                """)
    }
}

extension PostgresValue: ExclusiveSection {
    /// A transaction-scoped advisory lock on the namespace and key, held on a connection of its
    /// own while `body` runs (its reads and writes use others): every replica sharing the
    /// database waits for it. Ended with the transaction, or by the server when the connection
    /// or the process holding it dies.
    func withExclusiveSection<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws -> R {
        let logger = database.logger
        let name = "coffer-section:" + identity
        return try await database.client.withTransaction(logger: logger) { connection in
            try await connection.rows("SELECT pg_advisory_xact_lock(hashtextextended(\(name), 0))", logger: logger)
            return try await body()
        }
    }
}
