/// A place that keeps one value of type `T`: save it, read it back, delete it.
///
/// `Storage` is the contract every Coffer backend fulfils: ``MemoryStorage``, ``FileStorage``,
/// ``EncryptedFileStorage`` and your own. Code written against `any Storage<T>` runs unchanged on
/// any of them.
///
/// Implementations must:
/// - return `nil` from ``get()`` when nothing is stored;
/// - treat ``delete()`` of something absent as success, not an error;
/// - throw a typed error for every other failure, never answer `nil` for a value they could not
///   read, and never replace or wipe data they could not read.
///
/// Wrap an implementation in ``StorageDelegate`` to add caching and to serialise concurrent calls:
///
/// ```swift
/// final class MyStorage: Storage { ... }
/// let storage = StorageDelegate(delegate: MyStorage(), cacheStrategy: .cacheOnFailure)
/// ```
public protocol Storage<T>: Sendable {
    /// The type of value this storage keeps.
    associatedtype T: Codable & Sendable

    /// Stores `item`, replacing what was stored before.
    func save(item: T) async throws

    /// Returns the stored value, or `nil` when nothing is stored.
    func get() async throws -> T?

    /// Removes the stored value. Deleting when nothing is stored succeeds.
    func delete() async throws
}
