import CofferStorage
import Foundation
import GRDB

/// Opens one of Coffer's SQLite files the one way every SQLite store does (the legacy client,
/// the Oath and Push storages): created 0600 in a 0700 directory, it, its directory and SQLite's
/// companion files checked with `FileTrust`; WAL and a 10-second busy timeout so processes can
/// share it; foreign keys on; a file that is not Coffer's (or is a newer Coffer's) refused
/// before anything is written to it; then the schema's migrations, and Coffer's mark in the
/// header.
package enum SQLiteDatabaseFile {
    /// Coffer's mark in a database header (`PRAGMA application_id`): "Cofr".
    package static let applicationID: Int32 = 0x436F_6672

    /// The pool on the file at `path`, migrated by `migrator`.
    package static func open(path: String, migrator: DatabaseMigrator) throws -> DatabasePool {
        try createPrivately(path)
        return try openingAlone(path) {
            // A file that is not Coffer's must not be touched, and opening a pool writes to a
            // database: unless its header shows one of Coffer's own (the common case, which
            // then skips a connection), it is inspected read-only first.
            if !isKnownCofferDatabase(path, migrator: migrator) {
                var inspecting = Configuration()
                inspecting.readonly = true
                inspecting.busyMode = .timeout(10)
                try DatabaseQueue(path: path, configuration: inspecting).read { try checkOwnership($0, path: path, migrator: migrator) }
            }
            let pool = try DatabasePool(path: path, configuration: configuration)
            try pool.read { try checkOwnership($0, path: path, migrator: migrator) }
            try migrator.migrate(pool)
            try markHeader(pool, version: Int32(migrator.migrations.count))
            return pool
        }
    }

    /// One connection to the file at `path` (GRDB's `DatabaseQueue`), migrated by `migrator`:
    /// for a short-lived process, such as a command of the tool.
    ///
    /// A pool writes at every open (GRDB makes sure SQLite's WAL file is there and not empty,
    /// with a transaction, so that its read-only readers can open it), and SQLite then syncs
    /// that transaction and copies it back into the file at the last close: four syncs and a
    /// rewritten header for a process that only reads. One connection needs no such write. A
    /// file that is already one of Coffer's databases (``isKnownCofferDatabase(_:migrator:)``)
    /// is opened so, and a process that only reads it leaves it byte for byte as it was; any
    /// other file (a new one, one to inspect) is opened as ``open(path:migrator:)`` opens it.
    package static func openSingleConnection(path: String, migrator: DatabaseMigrator) throws -> any DatabaseWriter {
        try createPrivately(path)
        guard isKnownCofferDatabase(path, migrator: migrator) else { return try open(path: path, migrator: migrator) }
        return try openingAlone(path) {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.read { try checkOwnership($0, path: path, migrator: migrator) }
            try migrator.migrate(queue)
            try markHeader(queue, version: Int32(migrator.migrations.count))
            return queue
        }
    }

    /// Every connection's settings: a 10-second busy timeout so processes can share the file,
    /// foreign keys on.
    private static var configuration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        return configuration
    }

    /// Runs `body`, which opens the file at `path`, with no other process opening it: opening
    /// switches a new file to WAL and runs migrations, and processes opening one new file at
    /// once would otherwise get "database is locked" (that switch ignores the busy timeout).
    /// A file that is not a database, or is damaged, is a typed error that names it.
    private static func openingAlone<Opened>(_ path: String, _ body: () throws -> Opened) throws -> Opened {
        do {
            return try FileLock(path: path + ".open-lock").withExclusiveLock(body)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            throw StorageError.corrupted(location: path, reason: "it is not a SQLite database, or it is damaged (SQLite says: \(error.message ?? "\(error.resultCode)"))")
        }
    }

    /// Whether the file at `path` is, by its 100-byte header alone, one of Coffer's databases in
    /// WAL mode at a schema `migrator` knows: then opening it for writing changes nothing in
    /// it, and the read-only inspection can be skipped. Anything else (a new empty file,
    /// another program's database, a newer Coffer's, damage) is inspected read-only first.
    package static func isKnownCofferDatabase(_ path: String, migrator: DatabaseMigrator) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path), let header = try? handle.read(upToCount: 100) else { return false }
        try? handle.close()
        func integer(at offset: Int) -> Int32 {
            Int32(bitPattern: header[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) })
        }
        return header.count == 100 && header.starts(with: Array("SQLite format 3\u{0}".utf8)) && header[18] == 2 && header[19] == 2
            && integer(at: 68) == applicationID && (1...Int32(migrator.migrations.count)).contains(integer(at: 60))
    }

    /// Refuses a database that is not Coffer's (tables, but no migrations Coffer ran) or that a
    /// newer Coffer migrated further than `migrator` knows, before anything is written to it.
    package static func checkOwnership(_ db: Database, path: String, migrator: DatabaseMigrator) throws {
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        if !tables.isEmpty, !tables.contains("grdb_migrations") {
            throw StorageError.corrupted(location: path, reason: "it is a SQLite database, but not Coffer's: it holds tables Coffer did not make (\(tables.prefix(3).joined(separator: ", ")))")
        }
        if try migrator.hasBeenSuperseded(db) {
            throw StorageError.corrupted(location: path, reason: "it was written by a newer version of Coffer than this one; upgrade Coffer to use it")
        }
    }

    /// Marks the database as Coffer's, at schema `version` (once; a no-op afterwards).
    private static func markHeader(_ writer: some DatabaseWriter, version: Int32) throws {
        let (application, current) = try writer.read { db in
            (try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0, try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0)
        }
        guard application != applicationID || current != version else { return }
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.execute(sql: "PRAGMA user_version = \(version)")
        }
    }

    /// Creates the file 0600 in a checked 0700 directory (or checks the existing one), and
    /// checks SQLite's companion files.
    private static func createPrivately(_ path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileTrust.prepareDirectory(directory)
        close(try FileTrust.openOrCreate(path, .file))
        for companion in ["-wal", "-shm", "-journal"] {
            try FileTrust.checkExistingFile(path + companion, .file)
        }
    }
}
