/// How a ``StorageDelegate`` keeps a copy of the value in memory.
///
/// Memory copies are plaintext, whatever the backend encrypts on disk. A process that can dump
/// memory can read them. Choose ``noCache`` for values that must never linger.
public enum CacheStrategy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// No memory copy, ever. Every call goes to the storage and every error reaches the caller.
    case noCache

    /// The storage is the source of truth while it works; memory keeps the last value known and
    /// covers for failures.
    ///
    /// - A failed `save` (whatever the error) keeps the item in memory as a *pending* write, logs
    ///   a warning and does not throw. The next `get` writes it first; the next `save` supersedes
    ///   it with its own item; `delete` drops it. A pending write is in memory only: it is lost
    ///   if the process ends first.
    /// - A failed `get` returns the memory copy when there is one (and logs the failure); with no
    ///   copy the error reaches the caller.
    /// - `delete` clears memory and any pending write; its errors reach the caller.
    case cacheOnFailure

    /// Read-through cache: the first successful `get` fills memory and later `get`s are served
    /// from it. `save` and `delete` write through and update memory only after the storage
    /// accepted them. Errors reach the caller.
    ///
    /// Changes another process makes to the same storage are not seen while the copy is held.
    case cache

    /// The strategy's name as the spec spells it (`noCache`, `cache`, `cacheOnFailure`).
    public var description: String { rawValue }
}
