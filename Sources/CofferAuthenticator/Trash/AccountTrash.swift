import CofferStorage
import Foundation

/// Where an ``AuthenticatorClient`` keeps what it takes away — a removed account, a mechanism
/// replaced by a new enrolment or an import, an account's old names — for ``keepDays`` days, so
/// it can be brought back (``AuthenticatorClient/restore(trashID:replacing:)-neji``).
///
/// A trash is also part of the HOTP counter rule: the counters of the mechanisms it keeps count
/// for ``HOTPCounterFloor``, and each entry's counters are recorded in ``ledger`` when it is put
/// in and before it is forgotten (purged, emptied), so no code is issued twice after it is gone.
///
/// A store of your own keeps a trash by implementing the four storage requirements; the rules
/// (ids, purging, counters) are the extension's. Coffer ships ``SealedTrashDirectory`` (beside a
/// ``SQLiteStorageClient``, sealed with its key) and ``MemoryTrash``.
public protocol AccountTrash: Sendable {
    /// How many days an entry is kept (0 keeps nothing past the call that put it there).
    var keepDays: Int { get }
    /// Where the counters of the HOTP mechanisms that enter and leave the trash are recorded.
    var ledger: (any HOTPCounterLedger)? { get }
    /// Writes `entry`: a new one (`replacing` false) must not clash with one kept (throw), a
    /// rewrite replaces the one with its id.
    func write(_ entry: TrashEntry, replacing: Bool) throws
    /// Every entry that opens, and everything that does not, unsorted and unpurged.
    func readAll() throws -> (entries: [TrashEntry], damaged: [DamagedTrashEntry])
    /// Forgets the entry or the damaged thing named `name` (nothing when there is none).
    func delete(_ name: String) throws
    /// Why entries cannot be opened now (a key that cannot be used), or `nil`: then what does not
    /// open is waiting, not damaged, and ``empty()`` refuses. Defaults to `nil`.
    var unusableKey: (any Error)? { get }
}

extension AccountTrash {
    /// No key problem: what does not open is damaged.
    public var unusableKey: (any Error)? { nil }
}

/// Why ``AccountTrash/empty()`` refused.
public struct TrashWaitingForKey: Error, LocalizedError, Sendable {
    /// How many entries wait for the key.
    public let count: Int
    /// Why the key cannot be used.
    public let cause: any Error
    /// What is wrong and what to do.
    public var errorDescription: String? {
        "\(count) trash \(count == 1 ? "entry waits" : "entries wait") for the accounts' key, which cannot be used now "
            + "(\((cause as? LocalizedError)?.errorDescription ?? "\(cause)")); nothing was purged. Bring the key back first."
    }
}

extension AccountTrash {
    /// Keeps `account` and `mechanisms`, taken away for `reason`; records their counters; purges
    /// what is past its time. Returns the entry's id.
    @discardableResult
    public func put(_ account: Account, _ mechanisms: [Mechanism], reason: String, now: Date = Date()) throws -> String {
        let entry = TrashEntry(id: TrashEntry.newID(), trashedAt: now, reason: reason, account: account, mechanisms: mechanisms)
        try write(entry, replacing: false)
        try ledger?.rememberBlocking(mechanisms)
        try purge(now: now, sparing: entry.id)
        return entry.id
    }

    /// Rewrites the entry `id` with `mechanisms` as they were finally taken out, and records
    /// their counters (as ``put(_:_:reason:now:)`` does).
    public func update(_ id: String, account: Account, mechanisms: [Mechanism], reason: String, trashedAt: Date) throws {
        try write(TrashEntry(id: id, trashedAt: trashedAt, reason: reason, account: account, mechanisms: mechanisms), replacing: true)
        try ledger?.rememberBlocking(mechanisms)
    }

    /// Every entry that opens, newest first, after purging the expired ones.
    public func entries(now: Date = Date()) throws -> [TrashEntry] {
        try purge(now: now)
        return try readAll().entries.sorted { $0.trashedAt > $1.trashedAt }
    }

    /// What does not open as an entry, each with why.
    public func damaged() throws -> [DamagedTrashEntry] {
        try readAll().damaged
    }

    /// Forgets the entry `id` (after it was restored).
    public func remove(_ id: String) throws {
        try delete(id)
    }

    /// Forgets everything now, damaged things too (the secrets in them are to go); returns how
    /// many went. The counters of the entries stay recorded.
    public func empty() throws -> Int {
        let (entries, damaged) = try readAll()
        // Entries that wait for the key are not purged unseen: the key comes first.
        if !damaged.isEmpty, let cause = unusableKey { throw TrashWaitingForKey(count: damaged.count, cause: cause) }
        try ledger?.rememberBlocking(entries.flatMap(\.mechanisms))
        for name in entries.map(\.id) + damaged.map(\.name) { try delete(name) }
        return entries.count + damaged.count
    }

    private func purge(now: Date, sparing kept: String? = nil) throws {
        let limit = now.addingTimeInterval(-Double(keepDays) * 86_400)
        for entry in try readAll().entries where entry.trashedAt < limit && entry.id != kept {
            try ledger?.rememberBlocking(entry.mechanisms)
            try delete(entry.id)
        }
    }
}
