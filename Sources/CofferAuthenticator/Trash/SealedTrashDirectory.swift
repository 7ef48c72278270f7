import CofferStorage
import Foundation

/// The trash of a ``SQLiteStorageClient``: one file per entry, `<directory>/<id>` (0600, in a
/// 0700 directory checked before use), its JSON sealed with the store's own key through
/// ``SQLiteStorageClient/sealCompanion(_:)`` (so nothing is sealed while the key is missing) and
/// holding its id, so a file renamed over another is refused. The `coffer` tool keeps it in
/// `<data-dir>/trash`.
public struct SealedTrashDirectory: AccountTrash {
    /// The directory of the entries.
    public let directory: URL
    /// How many days an entry is kept.
    public let keepDays: Int
    /// The store the entries belong with: they are sealed with its key, through its check.
    public let store: SQLiteStorageClient
    /// Where the counters of the HOTP mechanisms that enter and leave the trash are recorded.
    public let ledger: (any HOTPCounterLedger)?

    /// The trash in `directory` of the accounts in `store`, recording counters in `ledger`.
    public init(directory: URL, store: SQLiteStorageClient, ledger: (any HOTPCounterLedger)?, keepDays: Int = 30) {
        self.directory = directory
        self.store = store
        self.ledger = ledger
        self.keepDays = max(0, keepDays)
    }

    /// The trash of the `coffer` tool's store in `dataDirectory`: `dataDirectory/trash`, its
    /// counters in the store's ``SealedCounterLedgerFile``.
    public init(dataDirectory: URL, store: SQLiteStorageClient, keepDays: Int = 30) {
        self.init(directory: dataDirectory.appendingPathComponent("trash", isDirectory: true), store: store,
                  ledger: SealedCounterLedgerFile(dataDirectory: dataDirectory, store: store), keepDays: keepDays)
    }

    /// Why no entry opens now, or `nil`: the store's key cannot be used (missing, another key, a
    /// TPM or keyring that does not answer). Entries that do not open then are not damaged: they
    /// wait for the key.
    public var keyProblem: (any Error)? { store.keyProblem }

    /// Seals and writes `entry` (0600 from the first byte), creating the directory 0700; a new
    /// entry never replaces a file (an exclusive create), a rewrite replaces it by rename.
    public func write(_ entry: TrashEntry, replacing: Bool) throws {
        try FileTrust.prepareDirectory(directory)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970  // with its fraction: entries of one second keep their order
        let sealed = try store.sealCompanion(try encoder.encode(entry))
        if replacing { try PrivateFile.write(sealed, to: path(entry.id)) } else { try PrivateFile.create(sealed, at: path(entry.id)) }
    }

    /// Every file that opens as an entry, and every other file with why it does not.
    public func readAll() throws -> (entries: [TrashEntry], damaged: [DamagedTrashEntry]) {
        guard try FileTrust.checkExistingDirectory(directory.path) else { return ([], []) }
        var entries: [TrashEntry] = [], damaged: [DamagedTrashEntry] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where !name.hasPrefix(".") {
            do {
                if let entry = try read(name) { entries.append(entry) }
            } catch let problem as Problem {
                damaged.append(DamagedTrashEntry(name: name, why: problem.why))
            } catch {
                damaged.append(DamagedTrashEntry(name: name, why: (error as? LocalizedError)?.errorDescription ?? "\(error)"))
            }
        }
        return (entries, damaged)
    }

    /// Removes the file `name` (and what a write of it killed halfway left); a directory someone
    /// put there is refused.
    public func delete(_ name: String) throws {
        let path = path(name)
        guard unlink(path) == 0 || errno == ENOENT else { throw StorageError.io(operation: "remove", path: path, code: errno) }
        PrivateFile.removeStaleTemporaries(of: path)
    }

    /// Why no entry opens now (the store's key cannot be used), or `nil`.
    public var unusableKey: (any Error)? { keyProblem }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private struct Problem: Error { let why: String }

    /// The entry in the file `name`, `nil` when it went meanwhile.
    private func read(_ name: String) throws -> TrashEntry? {
        guard TrashEntry.isID(name) else { throw Problem(why: "its name is not a trash entry's") }
        guard let sealed = try PrivateFile.read(path(name), limit: 1 << 20) else { return nil }
        let opened: Data
        do {
            opened = try store.openCompanion(sealed)
        } catch {
            if keyProblem != nil { throw Problem(why: "the accounts' key cannot be used now") }
            throw Problem(why: "it does not open with the accounts' key (changed, or from another store)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let entry = try? decoder.decode(TrashEntry.self, from: opened) else { throw Problem(why: "it is not a trash entry") }
        guard entry.id == name else { throw Problem(why: "it holds the entry \(entry.id), not \(name) (renamed or swapped)") }
        return entry
    }
}
