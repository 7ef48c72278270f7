import CofferMFAEngine
import CofferAuthenticator
import CofferStorage
import Foundation

/// What `remove`, `add --replace`, an overwriting `import` and `rename` take away, kept for
/// ``Trash/keepDays`` days so `coffer restore` can bring it back.
///
/// Each entry is one file, `<data-dir>/trash/<id>` (0600, in a 0700 directory), its JSON sealed
/// with the accounts' own encryptor (the same key, AES-256-GCM), holding its id so a file
/// renamed over another is refused. Entries older than the keeping time are purged whenever the
/// trash is read or written.
struct Trash {
    /// How long an entry is kept: `COFFER_TRASH_DAYS` (0 to 365; 0 keeps nothing past the
    /// command that put it there), else 30 days.
    static var keepDays: Int {
        ProcessInfo.processInfo.environment["COFFER_TRASH_DAYS"].flatMap(Int.init).flatMap { (0...365).contains($0) ? $0 : nil } ?? 30
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
    let encryptor: any Encryptor

    /// The trash of the accounts in `storage`, when it is the SQLite store (the other backends
    /// keep no trash: `nil`).
    init?(storage: any StorageClient, dataDirectory: URL) {
        guard let sqlite = storage as? SQLiteStorageClient else { return nil }
        directory = dataDirectory.appendingPathComponent("trash", isDirectory: true)
        encryptor = sqlite.encryptor
    }

    /// Forgets every entry now (`coffer trash --empty`); returns how many there were.
    func empty() throws -> Int {
        let all = try read()
        for entry in all { try remove(entry.id) }
        return all.count
    }

    /// Keeps `account` and `mechanisms`, taken away for `reason`; returns the entry's id.
    @discardableResult
    func put(_ account: Account, _ mechanisms: [Mechanism], reason: String, now: Date = Date()) throws -> String {
        try FileTrust.prepareDirectory(directory)
        let id = String(format: "%08x", UInt32.random(in: 0...UInt32.max))
        let entry = Entry(id: id, trashedAt: now, reason: reason, account: account, mechanisms: mechanisms)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970  // with its fraction: entries of one second keep their order
        let sealed = try SyncBridge.run { try await encryptor.encrypt(data: try encoder.encode(entry)) }
        try PrivateFile.create(sealed, at: directory.appendingPathComponent(id).path)
        try purge(now: now, sparing: id)
        return id
    }

    /// Every entry, newest first, after purging the expired ones. An entry that cannot be opened
    /// is an error naming its file: nothing is skipped silently.
    func entries(now: Date = Date()) throws -> [Entry] {
        try purge(now: now)
        return try read().sorted { $0.trashedAt > $1.trashedAt }
    }

    /// Forgets the entry `id` (after it was restored).
    func remove(_ id: String) throws {
        let path = directory.appendingPathComponent(id).path
        guard unlink(path) == 0 || errno == ENOENT else { throw StorageError.io(operation: "remove", path: path, code: errno) }
    }

    private func read() throws -> [Entry] {
        guard try FileTrust.checkExistingDirectory(directory.path) else { return [] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).filter(Self.isID).map { id in
            let path = directory.appendingPathComponent(id).path
            guard let sealed = try PrivateFile.read(path, limit: 1 << 20) else { throw StorageError.io(operation: "read", path: path, code: ENOENT) }
            let entry = try decoder.decode(Entry.self, from: try SyncBridge.run { try await encryptor.decrypt(data: sealed) })
            guard entry.id == id else {
                throw StorageError.identityMismatch(location: path, expected: id, found: entry.id)
            }
            return entry
        }
    }

    private func purge(now: Date, sparing kept: String? = nil) throws {
        let limit = now.addingTimeInterval(-Double(Self.keepDays) * 86_400)
        for entry in try read() where entry.trashedAt < limit && entry.id != kept { try remove(entry.id) }
    }

    private static func isID(_ name: String) -> Bool {
        name.count == 8 && name.allSatisfy(\.isHexDigit)
    }
}

/// HOTP counters never go back: a mechanism restored, or imported from an older backup, keeps
/// the highest counter the store has seen for it (the same secret, issuer and account, in the
/// store or its trash), so no code the server has seen is issued again.
enum CounterFloor {
    /// The highest counter among `seen` for `mechanism`'s secret, issuer and account.
    static func highest(for mechanism: Mechanism, in seen: [Mechanism]) -> UInt64 {
        seen.filter { $0.type == .hotp && $0.secret == mechanism.secret && $0.issuer == mechanism.issuer && $0.accountName == mechanism.accountName }
            .map(\.counter).max() ?? 0
    }

    /// Moves every HOTP mechanism in `storage` up to the highest counter `seen` holds for it,
    /// one atomic claim at a time (never down); returns the titles of those moved.
    @discardableResult
    static func raise(in storage: any StorageClient, seen: [Mechanism]) throws -> [String] {
        var moved: [String] = []
        for account in storage.getAllAccounts() {
            for mechanism in storage.getMechanismsForAccount(account: account) where mechanism.type == .hotp {
                let floor = highest(for: mechanism, in: seen)
                guard mechanism.counter < floor else { continue }
                var stored = mechanism.counter
                while stored < floor {
                    stored = try storage.advanceCounter(mechanismUUID: mechanism.mechanismUUID).counter + 1
                }
                moved.append(AccountQuery.title(account))
            }
        }
        return moved
    }
}

/// What a command that may replace mechanisms (`add --replace`, `import --overwrite`, and any add
/// or import of a HOTP account seen before) must settle afterwards: the mechanisms it replaced go
/// to the trash, and HOTP counters are raised to the highest the store or its trash has seen.
struct ReplacementGuard {
    private let before: [(account: Account, mechanism: Mechanism)]

    /// Takes stock of every mechanism in `storage` before the change.
    init(_ storage: any StorageClient) {
        before = storage.getAllAccounts().flatMap { account in
            storage.getMechanismsForAccount(account: account).map { (account, $0) }
        }
    }

    /// After the change: trashes what it replaced (for `reason`), raises HOTP counters, and
    /// returns what to tell the person.
    func settle(_ storage: any StorageClient, trash: Trash?, reason: String) throws -> [String] {
        var notes: [String] = []
        let replaced = before.filter { old in
            guard let now = storage.getMechanismForUUID(uuid: old.mechanism.mechanismUUID) else { return true }
            return now.secret != old.mechanism.secret || now.type != old.mechanism.type
        }
        if let trash {
            for group in Dictionary(grouping: replaced, by: { $0.account.identifier }).values {
                let id = try trash.put(group[0].account, group.map(\.mechanism), reason: reason)
                notes.append("\(AccountQuery.title(group[0].account)): what it replaced is in the trash; coffer restore \(id) brings it back")
            }
        }
        let seen = before.map(\.mechanism) + ((try? trash?.entries()) ?? []).flatMap(\.mechanisms)
        for title in try CounterFloor.raise(in: storage, seen: seen) {
            notes.append("\(title): its HOTP counter was raised to the highest this store has seen, so no code is issued twice")
        }
        return notes
    }
}
