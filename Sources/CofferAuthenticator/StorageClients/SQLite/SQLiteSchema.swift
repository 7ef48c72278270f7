import CofferStorage
import Foundation
import GRDB

/// The SQLite schema of ``SQLiteStorageClient``, as versioned migrations.
///
/// Secrets (a mechanism's secret and challenge, a notification's challenge) are stored sealed
/// in BLOB columns; everything else is plain so that every lookup of the ``StorageClient``
/// protocol is an indexed query, and the columns that decide which code is shown under which
/// name are bound to the sealed secret (`MechanismBinding`). Times are REAL seconds since Foundation's reference date
/// (2001-01-01 00:00:00 UTC), which round-trips a `Date` exactly.
enum SQLiteSchema {
    /// Coffer's mark in a database header (`PRAGMA application_id`): "Cofr".
    static let applicationID: Int32 = 0x436F_6672

    /// The schema version written into the header (`PRAGMA user_version`): how many migrations
    /// have run.
    static var headerVersion: Int32 { Int32(migrator.migrations.count) }

    /// Whether the file at `path` is, by its 100-byte header alone, one of Coffer's databases in
    /// WAL mode at a schema this build knows: then opening it for writing changes nothing in
    /// it, and the read-only inspection can be skipped. Anything else (a new empty file,
    /// another program's database, a newer Coffer's, damage) is inspected read-only first.
    static func isKnownCofferDatabase(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path), let header = try? handle.read(upToCount: 100) else { return false }
        try? handle.close()
        func integer(at offset: Int) -> Int32 {
            Int32(bitPattern: header[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) })
        }
        return header.count == 100 && header.starts(with: Array("SQLite format 3\u{0}".utf8)) && header[18] == 2 && header[19] == 2
            && integer(at: 68) == applicationID && (1...headerVersion).contains(integer(at: 60))
    }

    /// Marks the database as Coffer's, at the current schema (once; a no-op afterwards).
    static func markHeader(_ writer: some DatabaseWriter) throws {
        let (application, version) = try writer.read { db in
            (try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0, try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0)
        }
        guard application != applicationID || version != headerVersion else { return }
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.execute(sql: "PRAGMA user_version = \(headerVersion)")
        }
    }

    /// Refuses a database that is not Coffer's (tables, but no migrations Coffer ran) or that a
    /// newer Coffer migrated further than this one knows, before anything is written to it.
    static func checkOwnership(_ db: Database, path: String) throws {
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        if !tables.isEmpty, !tables.contains("grdb_migrations") {
            throw StorageError.corrupted(location: path, reason: "it is a SQLite database, but not Coffer's: it holds tables Coffer did not make (\(tables.prefix(3).joined(separator: ", ")))")
        }
        if try migrator.hasBeenSuperseded(db) {
            throw StorageError.corrupted(location: path, reason: "it was written by a newer version of Coffer than this one; upgrade Coffer to use it")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: accounts, mechanisms, notifications, device token") { db in
            try db.create(table: "account") { t in
                t.column("issuer", .text).notNull()
                t.column("accountName", .text).notNull()
                t.column("displayIssuer", .text)
                t.column("displayAccountName", .text)
                t.column("imageURL", .text)
                t.column("backgroundColor", .text)
                t.column("timeAdded", .double).notNull()
                t.column("policies", .text)
                t.column("lockingPolicy", .text)
                t.column("isLocked", .boolean).notNull()
                t.primaryKey(["issuer", "accountName"])
            }
            try db.create(table: "mechanism") { t in
                t.column("mechanismUUID", .text).primaryKey()
                t.column("issuer", .text).notNull()
                t.column("accountName", .text).notNull()
                t.column("type", .text).notNull()
                t.column("secret", .blob).notNull()
                t.column("algorithm", .text).notNull()
                t.column("digits", .integer).notNull()
                t.column("period", .integer).notNull()
                t.column("counter", .integer).notNull()
                t.column("uid", .text)
                t.column("resourceId", .text)
                t.column("timeAdded", .double).notNull()
                t.column("registrationEndpoint", .text)
                t.column("authenticationEndpoint", .text)
                t.column("messageId", .text)
                t.column("challenge", .blob)
                t.foreignKey(["issuer", "accountName"], references: "account", onDelete: .cascade)
                t.uniqueKey(["issuer", "accountName", "type"])
            }
            try db.create(table: "notification") { t in
                t.column("mechanismUUID", .text).notNull().references("mechanism", onDelete: .cascade)
                t.column("messageId", .text).notNull()
                t.column("challenge", .blob).notNull()
                t.column("ttl", .integer).notNull()
                t.column("timeAdded", .double).notNull()
                t.column("pending", .boolean).notNull()
                t.column("approved", .boolean).notNull()
                t.column("loadBalanceKey", .text)
                t.column("message", .text)
                t.column("customPayload", .text)
                t.column("numbersChallenge", .text)
                t.column("contextInfo", .text)
                t.column("pushType", .text).notNull()
                t.primaryKey(["mechanismUUID", "messageId"])
            }
            try db.create(table: "pushDeviceToken") { t in
                t.column("id", .integer).primaryKey().check { $0 == 1 }
                t.column("tokenId", .text).notNull()
                t.column("timeAdded", .double).notNull()
            }
        }
        migrator.registerMigration("v2: bound mechanism columns, key check") { db in
            // 1: the secret is bound to its UUID only (rows from v1); 2: to the columns listed in
            // MechanismBinding as well.
            try db.alter(table: "mechanism") { t in
                t.add(column: "binding", .integer).notNull().defaults(to: MechanismBinding.legacy)
            }
            // One value sealed with the store's key when the store is first used: a key that does
            // not open it is not the store's key, and nothing new is sealed with it.
            try db.create(table: "keyCheck") { t in
                t.column("id", .integer).primaryKey().check { $0 == 1 }
                t.column("sealed", .blob).notNull()
            }
        }
        migrator.registerMigration("v3: find rows under the legacy binding without a scan") { db in
            // Opening the store re-seals rows written before v2; without this index that check
            // read every mechanism on every open (5 ms at 30,000 mechanisms).
            try db.execute(sql: "CREATE INDEX mechanism_legacy_binding ON mechanism(binding) WHERE binding = 1")
        }
        return migrator
    }
}
