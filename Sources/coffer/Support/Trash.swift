import CofferAuthenticator
import CofferMFAEngine
import CofferStorage
import Foundation
import Synchronization

/// What `remove`, `add --replace`, an overwriting `import` and `rename` take away, kept for
/// ``Trash/keepDays`` days so `coffer restore` can bring it back.
///
/// Each entry is one file, `<data-dir>/trash/<id>` (0600, in a 0700 directory), its JSON sealed
/// with the accounts' own encryptor (the same key, AES-256-GCM), holding its id so a file
/// renamed over another is refused. Entries older than the keeping time are purged whenever the
/// trash is read or written.
struct Trash: Sendable {
    /// How long an entry is kept: `COFFER_TRASH_DAYS` (0 to 365; 0 keeps nothing past the
    /// command that put it there), else 30 days.
    static var keepDays: Int {
        get throws {
            guard let text = ProcessInfo.processInfo.environment["COFFER_TRASH_DAYS"] else { return 30 }
            guard let days = Int(text), (0...365).contains(days) else {
                throw CommandFailure.usage("COFFER_TRASH_DAYS is '\(text.prefix(20))'; it must be a number of days from 0 to 365")
            }
            return days
        }
    }

    /// One thing taken away.
    struct Entry: Codable {
        /// Eight hex digits: what `coffer restore` takes.
        var id: String
        var trashedAt: Date
        /// What took it away: `removed`, `replaced`, `overwritten by import`, `renamed`.
        var reason: String
        /// The account as it was (for `renamed`: with the names it had).
        var account: Account
        /// The mechanisms taken away (none for `renamed`).
        var mechanisms: [Mechanism]
    }

    let directory: URL
    /// The store the entries belong with: they are sealed with its key, through its check.
    let store: SQLiteStorageClient
    /// Where the counters of the HOTP mechanisms that leave the trash are remembered.
    let ledger: SealedCounterLedgerFile

    /// The trash of the accounts in `storage`, when it is the SQLite store (the other backends
    /// keep no trash: `nil`).
    init?(storage: any StorageClient, dataDirectory: URL) {
        guard let sqlite = storage as? SQLiteStorageClient else { return nil }
        directory = dataDirectory.appendingPathComponent("trash", isDirectory: true)
        store = sqlite
        ledger = SealedCounterLedgerFile(dataDirectory: dataDirectory, store: sqlite)
    }

    /// Why no entry opens now, or `nil`: the store's key cannot be used (missing, another key,
    /// a TPM or keyring that does not answer). Entries that do not open then are not damaged:
    /// they wait for the key.
    var keyProblem: (any Error)? { store.keyProblem }

    /// The failure to report when entries do not open because the key cannot be used: what to
    /// do, how many wait, and the cause's exit status. `nil` when the key is usable.
    func keyFailure(waiting count: Int) -> CommandFailure? {
        guard count > 0, let problem = keyProblem else { return nil }
        return CommandFailure("\(UnreadableRecords.keyAdvice(problem)) Until then \(count) trash "
            + "\(count == 1 ? "entry stays" : "entries stay") sealed, as they are.", status: ExitStatus.of(problem))
    }

    /// Forgets every entry now (`coffer trash --empty`), damaged files too (the secrets in them
    /// are to go); returns how many files went. Their HOTP counters stay remembered.
    func empty() throws -> Int {
        let (entries, damaged) = try read()
        try ledger.rememberBlocking(entries.flatMap(\.mechanisms))
        for name in entries.map(\.id) + damaged.map(\.name) { try remove(name) }
        return entries.count + damaged.count
    }

    /// Keeps `account` and `mechanisms`, taken away for `reason`; returns the entry's id.
    @discardableResult
    func put(_ account: Account, _ mechanisms: [Mechanism], reason: String, now: Date = Date()) throws -> String {
        try FileTrust.prepareDirectory(directory)
        let id = String(format: "%08x", UInt32.random(in: 0...UInt32.max))
        let entry = Entry(id: id, trashedAt: now, reason: reason, account: account, mechanisms: mechanisms)
        try PrivateFile.create(try seal(entry), at: directory.appendingPathComponent(id).path)
        try ledger.rememberBlocking(mechanisms)
        try purge(now: now, sparing: id)
        return id
    }

    /// Every entry that opens, newest first, after purging the expired ones; the files that do
    /// not open (damaged, swapped, planted) are in ``damaged()``, and block nothing.
    func entries(now: Date = Date()) throws -> [Entry] {
        try purge(now: now)
        return try read().entries.sorted { $0.trashedAt > $1.trashedAt }
    }

    /// The files in the trash that do not open as entries, each with why.
    func damaged() throws -> [(name: String, why: String)] {
        try read().damaged
    }

    /// Forgets the entry `id` (after it was restored); a file that is not an entry (a directory
    /// someone put there) is refused.
    func remove(_ id: String) throws {
        let path = directory.appendingPathComponent(id).path
        guard unlink(path) == 0 || errno == ENOENT else { throw StorageError.io(operation: "remove", path: path, code: errno) }
    }

    /// Rewrites the entry `id` with `mechanisms` as they were finally taken out, and remembers
    /// their counters (as ``put(_:_:reason:now:)`` does).
    func update(_ id: String, account: Account, mechanisms: [Mechanism], reason: String, trashedAt: Date) throws {
        let entry = Entry(id: id, trashedAt: trashedAt, reason: reason, account: account, mechanisms: mechanisms)
        try PrivateFile.write(try seal(entry), to: directory.appendingPathComponent(id).path)
        try ledger.rememberBlocking(mechanisms)
    }

    private func seal(_ entry: Entry) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970  // with its fraction: entries of one second keep their order
        return try store.sealCompanion(try encoder.encode(entry))
    }

    private func read() throws -> (entries: [Entry], damaged: [(name: String, why: String)]) {
        guard try FileTrust.checkExistingDirectory(directory.path) else { return ([], []) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        var entries: [Entry] = [], damaged: [(name: String, why: String)] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where !name.hasPrefix(".") {
            let path = directory.appendingPathComponent(name).path
            do {
                guard Self.isID(name) else { throw TrashFileProblem(why: "its name is not a trash entry's") }
                guard let sealed = try PrivateFile.read(path, limit: 1 << 20) else { continue }
                let opened: Data
                do {
                    opened = try store.openCompanion(sealed)
                } catch {
                    if keyProblem != nil { throw TrashFileProblem(why: "the accounts' key cannot be used now") }
                    throw TrashFileProblem(why: "it does not open with the accounts' key (changed, or from another store)")
                }
                guard let entry = try? decoder.decode(Entry.self, from: opened) else { throw TrashFileProblem(why: "it is not a trash entry") }
                guard entry.id == name else { throw TrashFileProblem(why: "it holds the entry \(entry.id), not \(name) (renamed or swapped)") }
                entries.append(entry)
            } catch let problem as TrashFileProblem {
                damaged.append((name, problem.why))
            } catch {
                damaged.append((name, (error as? LocalizedError)?.errorDescription ?? "\(error)"))
            }
        }
        return (entries, damaged)
    }

    private struct TrashFileProblem: Error { let why: String }

    private func purge(now: Date, sparing kept: String? = nil) throws {
        let limit = now.addingTimeInterval(-Double(try Self.keepDays) * 86_400)
        for entry in try read().entries where entry.trashedAt < limit && entry.id != kept {
            try ledger.rememberBlocking(entry.mechanisms)
            try remove(entry.id)
        }
    }

    private static func isID(_ name: String) -> Bool {
        name.count == 8 && name.allSatisfy(\.isHexDigit)
    }
}

/// The HOTP counter ledger of the accounts in `storage`: beside the SQLite store, in the keyring
/// with the keyring's items, in the database with PostgreSQL's rows; `nil` for a store that
/// keeps none (only a store of your own).
enum CounterLedgers {
    static func of(_ storage: any StorageClient, dataDirectory: URL) -> (any HOTPCounterLedger)? {
        if let sqlite = storage as? SQLiteStorageClient { return SealedCounterLedgerFile(dataDirectory: dataDirectory, store: sqlite) }
        return storage as? any HOTPCounterLedger
    }
}
