import CofferStorage
import Crypto
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A `KeyStore` whose keys live in the database (`coffer_keys`), each data key wrapped under a
/// ``KeyEncryptionKey`` that never enters the database.
///
/// Two kinds of key ring: the shared one (``CofferDatabase/keys``), under the key-encryption
/// key every instance of a service holds, and an owner's own
/// (``CofferDatabase/keyStore(owner:keyEncryptionKey:)``), under a key-encryption key only
/// that owner holds, kept in rows of that owner (``ringOwner``) that row-level security shows
/// to the owner's database role alone.
///
/// A key id never changes meaning, so unwrapped keys are cached for the life of the store. The
/// *primary* id (the newest, which seals new data) is cached briefly: a rotation on another
/// instance is announced on the database's change channel and reaches this one within
/// milliseconds; should the announcement be lost (the listening connection down), the cached
/// id expires after ``CofferDatabase/Configuration/Options/keyCacheLifetime`` (1 s). Either way,
/// data sealed under the older key still opens, as after any rotation.
public final class DatabaseKeyStore: KeyStore, CustomReflectable, Sendable {
    private let client: PostgresClient
    private let kek: KeyEncryptionKey
    /// Whose key ring this is: an owner's name, or `""` for the ring all owners share.
    public let ringOwner: String
    private let changes: ChangeHub
    private let subscription = Mutex<UUID?>(nil)
    private let logger: Logger
    private let lifetime: Duration
    private let deadline: OperationDeadline
    private let keys = Mutex<[String: [UInt32: SymmetricKey]]>([:])
    private let primaries = Mutex<[String: (id: UInt32, fetched: ContinuousClock.Instant)]>([:])

    init(client: PostgresClient, kek: KeyEncryptionKey, ringOwner: String, lifetime: Duration, deadline: OperationDeadline,
         changes: ChangeHub, logger: Logger) {
        self.client = client
        self.deadline = deadline
        self.kek = kek
        self.ringOwner = ringOwner
        self.lifetime = lifetime
        self.changes = changes
        self.logger = logger
        let forgetting = ForgettingBox()
        subscription.withLock { $0 = changes.subscribeToTags { tag in forgetting.store?.noticeArrived(tag) } }
        forgetting.store = self
    }

    deinit {
        if let token = subscription.withLock({ $0 }) { changes.unsubscribe(token) }
    }

    /// Finds the store from the hub's callback without keeping it alive.
    private final class ForgettingBox: @unchecked Sendable {
        // @unchecked Sendable: `store` is set once, in init, before any notification can be
        // delivered to this box (the subscription is made just before); it is only read after.
        weak var store: DatabaseKeyStore?
    }

    /// A notification arrived (`nil`: listening started or stopped, so anything may have
    /// changed): forgets the primary id of each alias whose tag it is.
    private func noticeArrived(_ tag: String?) {
        guard let tag else { return forgetPrimaries() }
        for alias in primaries.withLock({ Array($0.keys) }) where ChangeNotice.keys(owner: ringOwner, alias: alias).tag(kek) == tag {
            forgetPrimary(alias)
        }
    }

    /// Only the key-encryption key's fingerprint: `dump(_:)` and the debugger never reach the
    /// pool (whose configuration holds the database password) or a cached key.
    public var customMirror: Mirror {
        Mirror(self, children: ["ringOwner": ringOwner, "keyEncryptionKey": kek.fingerprint], displayStyle: .class)
    }

    /// The newest key of `alias`, which seals new data; its id is cached for at most
    /// ``CofferDatabase/Configuration/Options/keyCacheLifetime``, less when a rotation is announced.
    ///
    /// - Throws: ``PostgresStorageError`` when the database fails or the key-encryption key does not
    ///   open the key (`.wrongKeyEncryptionKey`).
    public func primaryKey(for alias: String) async throws -> VersionedKey? {
        if let cached = primaries.withLock({ $0[alias] }), ContinuousClock.now - cached.fetched < lifetime {
            return try await key(for: alias, id: cached.id)
        }
        let rows = try await deadline.run("read the key ring") {
            try await self.client.rows("""
                SELECT id, wrapped, kek_fingerprint FROM coffer_keys WHERE owner = \(self.ringOwner) AND alias = \(alias) ORDER BY id DESC LIMIT 1
                """, logger: self.logger)
        }
        guard let row = rows.first else { return nil }
        let (id, wrapped, fingerprint) = try row.decode((Int, Data, String).self)
        let key = try remember(alias: alias, id: UInt32(id), wrapped: wrapped, fingerprint: fingerprint)
        primaries.withLock { $0[alias] = (UInt32(id), ContinuousClock.now) }
        return VersionedKey(id: UInt32(id), key: key)
    }

    /// The key of `alias` with this id, or `nil` when there is none; keys once opened are cached for
    /// the life of the store (an id never changes meaning).
    ///
    /// - Throws: ``PostgresStorageError`` when the database fails or the key-encryption key does not
    ///   open the key (`.wrongKeyEncryptionKey`).
    public func key(for alias: String, id: UInt32) async throws -> VersionedKey? {
        if let known = keys.withLock({ $0[alias]?[id] }) { return VersionedKey(id: id, key: known) }
        let rows = try await deadline.run("read a key") {
            try await self.client.rows("""
                SELECT wrapped, kek_fingerprint FROM coffer_keys WHERE owner = \(self.ringOwner) AND alias = \(alias) AND id = \(Int(id))
                """, logger: self.logger)
        }
        guard let row = rows.first else { return nil }
        let (wrapped, fingerprint) = try row.decode((Data, String).self)
        return VersionedKey(id: id, key: try remember(alias: alias, id: id, wrapped: wrapped, fingerprint: fingerprint))
    }

    /// The primary key of `alias`, creating key 1 when it has none. Instances creating it at the same
    /// moment all end up with the same key: one insert wins and the others read it.
    ///
    /// - Throws: ``PostgresStorageError`` when the database fails.
    public func createKey(for alias: String) async throws -> VersionedKey {
        if let existing = try await primaryKey(for: alias) { return existing }
        let wrapped = try self.kek.wrap(SymmetricKey(size: .bits256), ringOwner: ringOwner, alias: alias, id: 1)
        // Instances creating the first key at once: one insert wins, all read the same key.
        _ = try await deadline.run("create a key") {
            try await self.client.committed(logger: self.logger) { connection in
                try await connection.rows("""
                    INSERT INTO coffer_keys (owner, alias, id, wrapped, kek_fingerprint)
                    VALUES (\(self.ringOwner), \(alias), 1, \(wrapped), \(self.kek.fingerprint))
                    ON CONFLICT (owner, alias, id) DO NOTHING
                    """, logger: self.logger)
            }
        }
        forgetPrimary(alias)
        guard let key = try await primaryKey(for: alias) else {
            throw PostgresStorageError(.server, "The key for '\(alias)' was created but cannot be read back.")
        }
        return key
    }

    /// Adds a new primary key to `alias` and announces it to the other instances; older keys are
    /// kept, so what they sealed still opens. Rotations of one alias are serialized across
    /// instances by an advisory lock.
    ///
    /// - Throws: ``PostgresStorageError`` when the database fails; nothing is added then.
    public func rotateKey(for alias: String) async throws -> VersionedKey {
        let key = SymmetricKey(size: .bits256)
        let id = try await deadline.run("rotate the key") {
            try await self.client.committed(logger: self.logger) { connection in
                // One rotation at a time per alias, across instances.
                let lock = self.ringOwner.isEmpty ? "coffer-keys:" + alias : "coffer-keys:" + self.ringOwner + "/" + alias
                try await connection.rows("SELECT pg_advisory_xact_lock(hashtextextended(\(lock), 0))", logger: self.logger)
                var newest = 0
                for row in try await connection.rows("""
                    SELECT coalesce(max(id), 0) FROM coffer_keys WHERE owner = \(self.ringOwner) AND alias = \(alias)
                    """, logger: self.logger) {
                    newest = try row.decode(Int.self)
                }
                let id = newest + 1
                let wrapped = try self.kek.wrap(key, ringOwner: self.ringOwner, alias: alias, id: UInt32(id))
                try await connection.rows("""
                    INSERT INTO coffer_keys (owner, alias, id, wrapped, kek_fingerprint)
                    VALUES (\(self.ringOwner), \(alias), \(id), \(wrapped), \(self.kek.fingerprint))
                    """, logger: self.logger)
                try await connection.rows("SELECT pg_notify(\(CofferDatabase.changeChannel), \(self.notice(alias)))", logger: self.logger)
                return id
            }
        }
        keys.withLock { $0[alias, default: [:]][UInt32(id)] = key }
        primaries.withLock { $0[alias] = (UInt32(id), ContinuousClock.now) }
        return VersionedKey(id: UInt32(id), key: key)
    }

    /// Removes every key of `alias` and announces it; what they sealed can no longer be opened.
    ///
    /// - Throws: ``PostgresStorageError`` when the database fails.
    public func deleteKeys(for alias: String) async throws {
        try await deadline.run("delete the keys") {
            try await self.client.committed(logger: self.logger) { connection in
                try await connection.rows("DELETE FROM coffer_keys WHERE owner = \(self.ringOwner) AND alias = \(alias)", logger: self.logger)
                try await connection.rows("SELECT pg_notify(\(CofferDatabase.changeChannel), \(self.notice(alias)))", logger: self.logger)
            }
        }
        keys.withLock { $0[alias] = nil }
        forgetPrimary(alias)
    }

    /// The payload announcing a change to this store's ring `alias`.
    private func notice(_ alias: String) -> String {
        ChangeNotice.keys(owner: ringOwner, alias: alias).tag(kek)
    }

    /// Forgets which key is primary for `alias` (another instance rotated it).
    package func forgetPrimary(_ alias: String) {
        primaries.withLock { $0[alias] = nil }
    }

    /// Forgets every primary key id (announcements may have been missed).
    func forgetPrimaries() {
        primaries.withLock { $0.removeAll() }
    }

    private func remember(alias: String, id: UInt32, wrapped: Data, fingerprint: String) throws -> SymmetricKey {
        guard fingerprint == self.kek.fingerprint else {
            if !ringOwner.isEmpty {
                throw PostgresStorageError(.wrongKeyEncryptionKey, "The key ring of owner '\(ringOwner)' ('\(alias)', key \(id)) is "
                    + "wrapped with the key-encryption key \(fingerprint), and this one is \(self.kek.fingerprint): only that owner's "
                    + "key-encryption key opens it. Nothing was read or written.")
            }
            throw PostgresStorageError(.wrongKeyEncryptionKey, "The database's key \(id) for '\(alias)' is wrapped with the "
                + "key-encryption key \(fingerprint), and this instance has \(self.kek.fingerprint): give it the same key-encryption key "
                + "as the other instances. Nothing was read or written.")
        }
        let key: SymmetricKey
        do {
            key = try self.kek.unwrap(wrapped, ringOwner: ringOwner, alias: alias, id: id)
        } catch {
            throw PostgresStorageError(.wrongKeyEncryptionKey, "The database's key \(id) for '\(alias)' does not open with the "
                + "key-encryption key \(self.kek.fingerprint): the row was changed or copied from another alias. It was left as it was.")
        }
        keys.withLock { $0[alias, default: [:]][id] = key }
        return key
    }
}
