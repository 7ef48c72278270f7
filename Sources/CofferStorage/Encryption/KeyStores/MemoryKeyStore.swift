import Synchronization

/// A key store that keeps keys in memory only, for tests and short-lived processes.
///
/// Keys disappear with the instance: data sealed with them cannot be opened afterwards.
public final class MemoryKeyStore: KeyStore {
    private let rings = Mutex<[String: KeyRing]>([:])

    /// Creates an empty key store.
    public init() {}

    public func primaryKey(for alias: String) async throws -> VersionedKey? {
        rings.withLock { $0[alias]?.primary }
    }

    public func key(for alias: String, id: UInt32) async throws -> VersionedKey? {
        rings.withLock { $0[alias]?.key(id: id) }
    }

    @discardableResult
    public func createKey(for alias: String) async throws -> VersionedKey {
        rings.withLock { rings in
            if let ring = rings[alias] { return ring.primary }
            let ring = KeyRing.fresh()
            rings[alias] = ring
            return ring.primary
        }
    }

    @discardableResult
    public func rotateKey(for alias: String) async throws -> VersionedKey {
        rings.withLock { rings in
            guard var ring = rings[alias] else {
                let ring = KeyRing.fresh()
                rings[alias] = ring
                return ring.primary
            }
            let key = ring.rotate()
            rings[alias] = ring
            return key
        }
    }

    public func deleteKeys(for alias: String) async throws {
        _ = rings.withLock { $0.removeValue(forKey: alias) }
    }
}
