import CofferStorage
import Foundation

/// A store that can hold back other processes' adds while one add checks and inserts, so the
/// rule that two accounts never hold one HOTP secret holds across processes, not only within one
/// client: the check (``HOTPCounterFloor``) and the insert run as one step.
public protocol SerializedAdds {
    /// Runs `body` while no other process adds to this store through the same protocol.
    func serializingAdds<R>(_ body: () throws -> R) throws -> R

    /// Runs `body` while no other process gives an account a name (adds, renames, imports,
    /// restores through ``AuthenticatorClient``), so two accounts never come to be listed alike.
    /// Taken before the add lock, never inside it. A store without one runs `body` as it is.
    func serializingNames<R>(_ body: () throws -> R) throws -> R
}

extension SerializedAdds {
    /// No names lock: `body` runs as it is.
    public func serializingNames<R>(_ body: () throws -> R) throws -> R { try body() }
}

/// SQLite's adds take an exclusive lock on `.<database>.adds.lock` beside the database file.
extension SQLiteStorageClient: SerializedAdds {
    /// Runs `body` holding the store's add lock (a file lock beside the database).
    public func serializingAdds<R>(_ body: () throws -> R) throws -> R {
        let file = URL(fileURLWithPath: path)
        let lock = FileLock(path: file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).adds.lock").path)
        return try lock.withExclusiveLock(body)
    }

    /// Runs `body` holding the store's names lock (`.<database>.names.lock` beside the database).
    public func serializingNames<R>(_ body: () throws -> R) throws -> R {
        let file = URL(fileURLWithPath: path)
        let lock = FileLock(path: file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).names.lock").path)
        return try lock.withExclusiveLock(body)
    }
}

/// The keyring's adds take a lock of their own beside the client's (`KeyringLock` named after
/// the prefix and `.adds`), held by every process of the user that reaches the same keyring.
/// It is a different lock from the one each write takes, so the writes inside `body` can take
/// theirs.
extension KeychainStorageClient: SerializedAdds {
    /// Runs `body` holding the store's add lock.
    public func serializingAdds<R>(_ body: () throws -> R) throws -> R {
        try exclusivelyAdding(body)
    }

    /// Runs `body` holding the store's names lock (`KeyringLock` named after the prefix and `.names`).
    public func serializingNames<R>(_ body: () throws -> R) throws -> R {
        try exclusivelyNaming(body)
    }
}
