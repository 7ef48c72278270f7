import CofferStorage
import Foundation

/// The HOTP counter ledger of a SQLite store: one file beside the database (`hotp-counters` in
/// the `coffer` tool's data directory), its JSON sealed with the store's own key through
/// ``SQLiteStorageClient/sealCompanion(_:)`` (so nothing is sealed while the key is missing),
/// written 0600 by rename, read and raised under an exclusive lock on `.hotp-counters.lock`
/// beside it: two processes at once lose neither's counters.
public struct SealedCounterLedgerFile: HOTPCounterLedger {
    /// The ledger file.
    public let file: URL
    private let store: SQLiteStorageClient

    /// The ledger in `file`, sealed with `store`'s key. The file's directory must exist and be
    /// yours (`FileTrust.prepareDirectory(_:)`) before the first ``remember(_:)``.
    public init(file: URL, store: SQLiteStorageClient) {
        self.file = file
        self.store = store
    }

    /// The ledger of the `coffer` tool's store in `directory`: `directory/hotp-counters`.
    public init(dataDirectory directory: URL, store: SQLiteStorageClient) {
        self.init(file: directory.appendingPathComponent("hotp-counters"), store: store)
    }

    private var lock: FileLock {
        FileLock(path: file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).lock").path)
    }

    /// Every counter the file remembers, by key fingerprint (none when there is no file yet).
    public func rememberedCounters() throws -> [String: UInt64] {
        guard let sealed = try PrivateFile.read(file.path, limit: 16 << 20) else { return [:] }
        return try JSONDecoder().decode([String: UInt64].self, from: try store.openCompanion(sealed))
    }

    /// Raises the file's counters under its lock, sealing it through the store's checked path.
    public func remember(_ counters: [String: UInt64]) throws {
        guard !counters.isEmpty else { return }
        try lock.withExclusiveLock {
            let remembered = try rememberedCounters()
            let raised = remembered.raised(by: counters)
            guard raised != remembered else { return }
            try PrivateFile.write(try store.sealCompanion(try JSONEncoder().encode(raised)), to: file.path)
        }
    }
}
