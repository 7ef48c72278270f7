/// Keeps a value in memory: the storage behind ``MemoryStorage``, and the spec's custom-storage
/// example made safe for concurrency.
public actor Memory<T: Codable & Sendable>: Storage, CustomReflectable {
    private var data: T?

    /// Creates an empty memory.
    public init() {}

    public func save(item: T) async throws { data = item }

    public func get() async throws -> T? { data }

    public func delete() async throws { data = nil }

    /// No children: `dump(_:)` and the debugger cannot reveal the value.
    public nonisolated var customMirror: Mirror { Mirror(self, children: [:], displayStyle: .class) }
}

/// Keeps a value in process memory, in plaintext. It is gone when the process ends.
///
/// ```swift
/// let storage = MemoryStorage<Dog>()
/// try await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever"))
/// ```
public final class MemoryStorage<T: Codable & Sendable>: StorageDelegate<T>, @unchecked Sendable {
    // @unchecked Sendable: adds nothing to StorageDelegate (which is safe).

    /// Creates an empty memory storage. `cacheable` is accepted for the spec's API shape; memory
    /// is already memory.
    public init(cacheable: Bool = false) {
        super.init(delegate: Memory<T>(), cacheStrategy: cacheable ? .cache : .noCache)
    }
}
