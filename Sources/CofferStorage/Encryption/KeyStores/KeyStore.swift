import Foundation
import Crypto

/// An AES-256 key together with its id within an alias.
///
/// Key ids start at 1 and grow by one with each rotation. The id is written into every envelope
/// the key seals, so that the right key can be found again after a rotation.
public struct VersionedKey: Sendable {
    /// The key's id within its alias.
    public let id: UInt32
    /// The key material. `SymmetricKey` zeroes its memory when released.
    public let key: SymmetricKey

    /// Creates a versioned key.
    public init(id: UInt32, key: SymmetricKey) {
        self.id = id
        self.key = key
    }
}

/// Keeps versioned AES-256 keys, grouped under aliases.
///
/// Each alias holds one or more keys; one of them is the *primary* that seals new data. Rotating
/// an alias adds a new primary and keeps the older keys so that data sealed with them still opens.
///
/// Implementations must make ``createKey(for:)`` and ``rotateKey(for:)`` atomic: two callers (or
/// two processes) creating a key for the same alias at once must end up with the same key, or
/// data sealed by one of them would be lost.
///
/// Built in: ``MemoryKeyStore`` and ``FileKeyStore``.
public protocol KeyStore: Sendable {
    /// The key that seals new data under `alias`, or `nil` when the alias has no keys.
    func primaryKey(for alias: String) async throws -> VersionedKey?

    /// The key with id `id` under `alias`, or `nil` when there is none.
    func key(for alias: String, id: UInt32) async throws -> VersionedKey?

    /// Returns the primary key of `alias`, creating a first key when the alias has none.
    @discardableResult
    func createKey(for alias: String) async throws -> VersionedKey

    /// Adds a new primary key to `alias` (creating the alias if needed) and returns it. Older keys
    /// are kept.
    @discardableResult
    func rotateKey(for alias: String) async throws -> VersionedKey

    /// Removes every key of `alias`. Data sealed with them can no longer be opened. Deleting an
    /// alias that has no keys succeeds.
    func deleteKeys(for alias: String) async throws
}

/// A key store whose whole key rings can be read and written, so that a store's keys can move
/// to another key store unchanged (nothing re-sealed): `coffer key move`. Built in:
/// ``FileKeyStore`` and ``SecretServiceKeyStore``.
public protocol KeyRingStore: KeyStore {
    /// Every key of `alias`, or `nil` when it has none.
    func keyRing(for alias: String) async throws -> KeyRing?

    /// Stores `ring` as the keys of `alias`, which must have none: an alias's keys are never
    /// replaced (``KeyStoreError/alreadyExists(alias:location:)``).
    func insertKeyRing(_ ring: KeyRing, for alias: String) async throws
}

/// Why a key store operation failed.
public enum KeyStoreError: Error, Sendable {
    /// The stored keys for `alias` cannot be read. They were left untouched.
    case corrupted(alias: String, location: String, reason: String)
    /// The alias cannot be used as a name in this key store.
    case invalidAlias(String, reason: String)
    /// The underlying store failed.
    case storageFailed(alias: String, cause: any Error)
    /// The alias already has keys, which are never replaced.
    case alreadyExists(alias: String, location: String)
}

extension KeyStoreError: LocalizedError {
    /// What went wrong and what to do, naming the alias and where its keys are; never a key.
    public var errorDescription: String? {
        switch self {
        case let .corrupted(alias, location, reason):
            return "The keys for '\(alias)' at \(location) cannot be read (\(reason)). They were left untouched; "
                + "restore them from a backup. Data sealed with them cannot be opened without them."
        case let .invalidAlias(alias, reason):
            return "The key alias '\(alias)' cannot be used: \(reason)."
        case let .alreadyExists(alias, location):
            return "\(location) already holds keys for '\(alias)'; they were left as they are. Move them aside first if they are not needed."
        case let .storageFailed(alias, cause):
            let detail = (cause as? LocalizedError)?.errorDescription ?? String(describing: cause)
            return "The keys for '\(alias)' could not be read or written: \(detail)"
        }
    }
}

extension KeyStoreError: CustomStringConvertible {
    /// The same text as ``errorDescription``, so `print(error)` and string interpolation read well.
    public var description: String { errorDescription ?? "KeyStoreError" }
}
