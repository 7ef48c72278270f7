import Foundation
import Logging
import Synchronization

/// Wraps a ``Storage`` to serialise its calls and to keep a memory copy as a ``CacheStrategy``
/// says.
///
/// Every operation, including its call into the wrapped storage, runs while one per-instance lock
/// is held, so concurrent `save`, `get` and `delete` calls on the same instance never interleave
/// halfway. The built-in backends (``MemoryStorage``, ``FileStorage``, ``EncryptedFileStorage``)
/// are subclasses; so can yours be:
///
/// ```swift
/// public class CustomStorageDelegate<T: Codable & Sendable>: StorageDelegate<T> {
///     public init(cacheable: Bool = false) {
///         super.init(delegate: CustomStorage<T>(), cacheable: cacheable)
///     }
/// }
/// ```
///
/// Subclasses that override an operation should call `super`; an override must not call another
/// operation of the same instance from inside it, because the lock is not re-entrant.
open class StorageDelegate<T: Codable & Sendable>: Storage, ExclusiveSection, CustomReflectable, @unchecked Sendable {
    // @unchecked Sendable: the mutable state is `memory`, read and written only while `lock` is
    // held (see `withLock`), and `served`/`servedAbsent`, read and written only while
    // `servedLock` is held. Everything else is immutable.

    /// The storage this delegate forwards to.
    public let delegate: any Storage<T>

    /// How this instance keeps a memory copy.
    public let cacheStrategy: CacheStrategy

    /// Where warnings about absorbed failures go (``CacheStrategy/cacheOnFailure``). Values are
    /// never logged.
    public let logger: Logger

    private let lock = AsyncLock()
    private var memory = MemoryCopy<T>()
    /// With ``CacheStrategy/cache``: the answer `get()` may give without taking `lock`, if one
    /// is known (a value, or `servedAbsent`: nothing stored). Every `save` and `delete` clears
    /// it before it starts, so a `get` that begins after a write began waits for that write as
    /// it always did.
    ///
    /// Why a class reference behind a `Mutex<Void>`, not a `Mutex<T??>`: this code is
    /// unspecialised (generic over `T`, called from other modules), and there every use of
    /// `Optional<T>` looks up that type's metadata in the runtime's cache, which cost more than
    /// the rest of a cached `get`. A reference to a class instance is one pointer whatever `T`
    /// is, and the value inside is copied with `T`'s own metadata (docs/performance.md, P4).
    @usableFromInline let servedLock = Mutex(())
    @usableFromInline var served: Served<T>?
    @usableFromInline var servedAbsent = false

    /// The cache strategy and the wrapped storage's type, never the value or its memory copy, so
    /// `dump(_:)` and the debugger cannot reveal what is stored. Subclasses inherit it.
    open var customMirror: Mirror {
        Mirror(self, children: ["cacheStrategy": cacheStrategy, "delegate": "\(type(of: delegate))"], displayStyle: .class)
    }

    /// Creates a delegate the way the spec's iOS API does: `cacheable: true` means
    /// ``CacheStrategy/cache``, `false` means ``CacheStrategy/noCache``.
    ///
    /// A designated initializer, so subclasses can call `super.init(delegate:cacheable:)` as the
    /// spec's custom-storage example does.
    public init(delegate: any Storage<T>, cacheable: Bool = false) {
        self.delegate = delegate
        self.cacheStrategy = cacheable ? .cache : .noCache
        self.logger = Logger(label: "org.coffer.storage")
    }

    /// Creates a delegate with an explicit cache strategy.
    ///
    /// - Parameters:
    ///   - delegate: The storage that does the work.
    ///   - cacheStrategy: How to keep a memory copy.
    ///   - logger: Receives warnings when a failure is absorbed. Defaults to `org.coffer.storage`.
    public init(
        delegate: any Storage<T>,
        cacheStrategy: CacheStrategy,
        logger: Logger = Logger(label: "org.coffer.storage")
    ) {
        self.delegate = delegate
        self.cacheStrategy = cacheStrategy
        self.logger = logger
    }

    /// Stores `item` through the wrapped storage, then updates the memory copy.
    ///
    /// With ``CacheStrategy/cacheOnFailure`` a failure is absorbed: the item is kept as a pending
    /// write, a warning is logged, and the call returns normally.
    open func save(item: T) async throws {
        try await withLock(writing: true) {
            do {
                try await delegate.save(item: item)
                memory.stored(item, strategy: cacheStrategy)
                trace("saved")
            } catch {
                guard cacheStrategy == .cacheOnFailure else { throw error }
                memory.keepPending(item)
                warn("Save failed; the item is kept in memory and will be written by the next get", error)
            }
        }
    }

    /// Returns the stored value, from memory when the strategy allows it.
    ///
    /// Inlinable, so a caller that names a final backend (`EncryptedFileStorage<Token>`) gets
    /// the memory copy through code specialised for its type, without the runtime's generic
    /// metadata lookups (docs/performance.md, P4).
    @inlinable
    open func get() async throws -> T? {
        if cacheStrategy == .cache {
            let (value, absent) = servedLock.withLock { _ in (served, servedAbsent) }
            if let value { return value.value }
            if absent { return nil }
        }
        return try await getThroughLock()
    }

    @usableFromInline
    func getThroughLock() async throws -> T? {
        return try await withLock {
            if cacheStrategy == .cache, let known = memory.known {
                return known
            }
            if cacheStrategy == .cacheOnFailure, let pending = memory.pending {
                guard await retryPending(pending) else { return pending }
            }
            do {
                let value = try await delegate.get()
                memory.read(value, strategy: cacheStrategy)
                trace(value == nil ? "read: nothing stored" : "read")
                return value
            } catch {
                guard cacheStrategy == .cacheOnFailure, let copy = memory.lastValue else { throw error }
                warn("Read failed; returning the last value known in memory", error)
                return copy
            }
        }
    }

    /// Deletes the stored value and forgets any memory copy and pending write.
    open func delete() async throws {
        try await withLock(writing: true) {
            if cacheStrategy == .cacheOnFailure { memory.clear() }
            try await delegate.delete()
            memory.deleted(strategy: cacheStrategy)
            trace("deleted")
        }
    }

    /// Forgets the memory copy, so that the next `get` reads the storage again: for backends that
    /// learn another process or instance changed the stored value (`PostgresStorage`, from a
    /// notification). A pending write (``CacheStrategy/cacheOnFailure``) is kept.
    public func forgetMemoryCopy() async {
        await withLock(writing: true) { memory.forgetKnown() }
    }

    /// Runs `body` in the stored value's exclusive section (see ``ExclusiveSection``): alone
    /// among every holder of the section in any process that offers one through the wrapped
    /// storage. The memory copy is forgotten first, so a `get()` inside reads what the last
    /// holder stored.
    ///
    /// The wrapped storage's section is used when it offers one; otherwise `body` runs without
    /// any cross-process exclusion (a storage that only this process can see needs none).
    open func withExclusiveSection<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws -> R {
        if let section = delegate as? any ExclusiveSection {
            return try await section.withExclusiveSection {
                await self.forgetMemoryCopy()
                return try await body()
            }
        }
        await forgetMemoryCopy()
        return try await body()
    }

    /// Writes the pending item; returns whether it reached the storage.
    private func retryPending(_ item: T) async -> Bool {
        do {
            try await delegate.save(item: item)
            memory.stored(item, strategy: cacheStrategy)
            return true
        } catch {
            warn("Retrying a pending save failed; serving the pending item from memory", error)
            return false
        }
    }

    /// Logs that an operation reached the storage, at trace level. Never the value.
    private func trace(_ message: Logger.Message) {
        logger.trace(message, metadata: ["storage": "\(type(of: delegate))", "strategy": "\(cacheStrategy)"])
    }

    /// Logs an absorbed failure. The error is logged, never the value.
    private func warn(_ message: Logger.Message, _ error: any Error) {
        logger.warning(message, metadata: ["error": "\(error)", "storage": "\(type(of: delegate))"])
    }

    /// Runs `body` holding the lock; then publishes what memory knows for lock-free `get`s.
    private func withLock<R>(writing: Bool = false, _ body: () async throws -> R) async rethrows -> R {
        // Only `.cache` ever publishes a value; under any other strategy there is nothing to clear.
        guard cacheStrategy == .cache else { return try await lock.withLock(body) }
        if writing { publish(nil) }
        return try await lock.withLock {
            defer { publish(memory.known) }
            return try await body()
        }
    }

    private func publish(_ known: T??) {
        let value = (known ?? nil).map { Served($0) }
        servedLock.withLock { _ in
            served = value
            servedAbsent = known != nil && value == nil
        }
    }
}

/// A value a `.cache` ``StorageDelegate`` serves from memory (see `StorageDelegate.served`).
@usableFromInline
final class Served<T: Sendable>: Sendable {
    @usableFromInline let value: T

    init(_ value: T) { self.value = value }
}

/// What a ``StorageDelegate`` remembers between calls.
struct MemoryCopy<T> {
    private enum Slot {
        case unknown
        case absent
        case value(T)
    }

    private var slot = Slot.unknown
    /// A save that failed under ``CacheStrategy/cacheOnFailure`` and waits to be retried.
    private(set) var pending: T?

    /// The remembered answer to `get()`, if one is known: `.some(nil)` means "known absent".
    var known: T?? {
        switch slot {
        case .unknown: return nil
        case .absent: return .some(nil)
        case .value(let value): return .some(value)
        }
    }

    /// The last value known to exist, if any.
    var lastValue: T? {
        if case .value(let value) = slot { return value }
        return nil
    }

    mutating func stored(_ item: T, strategy: CacheStrategy) {
        pending = nil
        if strategy != .noCache { slot = .value(item) }
    }

    mutating func read(_ value: T?, strategy: CacheStrategy) {
        guard strategy != .noCache else { return }
        slot = value.map(Slot.value) ?? .absent
    }

    mutating func deleted(strategy: CacheStrategy) {
        pending = nil
        if strategy != .noCache { slot = .absent }
    }

    mutating func keepPending(_ item: T) {
        pending = item
        slot = .value(item)
    }

    mutating func clear() {
        pending = nil
        slot = .unknown
    }

    /// Forgets the remembered answer, unless a pending write is what it remembers.
    mutating func forgetKnown() {
        if pending == nil { slot = .unknown }
    }
}
