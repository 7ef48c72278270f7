import CofferStorage
import Foundation
import GRDB

/// What can be read from an authenticator database without its key: the names and the plain
/// columns, never a secret.
extension SQLiteStorageClient {
    /// The names of the accounts stored at `path` (`Issuer:account`, as shown), read without
    /// the key and without creating or changing anything: for shell completion, which must not
    /// make a store (or a key) appear because someone pressed Tab. Empty when there is no
    /// database; the file and its directory are checked as every Coffer file is.
    public static func accountTitles(inDatabaseAt path: String) throws -> [String] {
        guard try FileTrust.checkExistingDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path),
              FileManager.default.fileExists(atPath: path) else { return [] }
        try FileTrust.checkExistingFile(path, .file)
        // `immutable=1`: no locks, no `-wal`/`-shm` companions created (a read-only reader of a
        // WAL database makes them otherwise), at the price of not seeing what a running process
        // has not checkpointed yet. Only where SQLite reads URI file names (else the name would
        // be taken literally, and a file of that name created).
        guard try DatabaseQueue().read({ try String.fetchAll($0, sql: "PRAGMA compile_options") }).contains("USE_URI"),
              let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) else { return [] }
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: "file:\(encoded)?immutable=1", configuration: configuration).read { db in
            try Row.fetchAll(db, sql: "SELECT coalesce(displayIssuer, issuer), coalesce(displayAccountName, accountName) FROM account")
                .compactMap { row in
                    guard let issuer = try? row.decode(String.self, atIndex: 0), let name = try? row.decode(String.self, atIndex: 1) else { return nil }
                    return "\(issuer):\(name)"
                }
        }
    }

    /// The mechanisms in the store, described by their plain columns only: read without the
    /// key, so they can be listed while the key cannot be opened (see ``MechanismOutline`` for
    /// what is not checked then). A row whose columns cannot be decoded is left out; reading
    /// the store as usual counts it.
    ///
    /// - Throws: the database's error when the table cannot be read at all.
    public func mechanismOutlines() throws -> [MechanismOutline] {
        try database.read { try Row.fetchAll($0, sql: MechanismRow.select + "ORDER BY timeAdded") }
            .compactMap { row in
                guard let stored = try? MechanismRow(row, store: path).stored, let type = MechanismType(rawValue: stored.type) else { return nil }
                return MechanismOutline(mechanismUUID: stored.uuid, issuer: stored.issuer, accountName: stored.accountName, type: type,
                                        algorithm: stored.algorithm, digits: stored.digits, period: stored.period, counter: stored.counter)
            }
    }
}
