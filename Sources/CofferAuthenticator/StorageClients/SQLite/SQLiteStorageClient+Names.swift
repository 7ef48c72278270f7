import CofferStorage
import Foundation
import GRDB

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
}
