import CofferStorage
import Foundation
import Synchronization

/// A trash in this process's memory, for a ``MemoryStorageClient``, tests and previews: what it
/// keeps ends with the process.
public final class MemoryTrash: AccountTrash {
    /// How many days an entry is kept.
    public let keepDays: Int
    /// Where the counters of the HOTP mechanisms that enter and leave the trash are recorded.
    public let ledger: (any HOTPCounterLedger)?
    private let kept = Mutex<[String: TrashEntry]>([:])

    /// An empty trash keeping entries `keepDays` days, recording counters in `ledger`.
    public init(keepDays: Int = 30, ledger: (any HOTPCounterLedger)? = nil) {
        self.keepDays = max(0, keepDays)
        self.ledger = ledger
    }

    /// Keeps `entry`; a new one whose id is taken is refused.
    public func write(_ entry: TrashEntry, replacing: Bool) throws {
        try kept.withLock { kept in
            if !replacing, kept[entry.id] != nil { throw StorageError.io(operation: "create", path: "trash/\(entry.id)", code: EEXIST) }
            kept[entry.id] = entry
        }
    }

    /// Every entry kept (none is ever damaged).
    public func readAll() throws -> (entries: [TrashEntry], damaged: [DamagedTrashEntry]) {
        (kept.withLock { Array($0.values) }, [])
    }

    /// Forgets the entry `name`.
    public func delete(_ name: String) throws {
        _ = kept.withLock { $0.removeValue(forKey: name) }
    }
}
