import GRDB

/// The SQLite schema of ``SQLiteOathStorage``, as versioned migrations: Android's table and
/// column names (`mfa_oath_data`), with the secret sealed in a BLOB and times as REAL seconds
/// since 2001-01-01 (which round-trips a `Date` exactly; Android writes milliseconds).
enum SQLiteOathSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: OATH credentials") { db in
            try db.create(table: "mfa_oath_data") { t in
                t.column("id", .text).primaryKey()
                t.column("user_id", .text)
                t.column("resource_id", .text)
                t.column("issuer", .text).notNull()
                t.column("display_issuer", .text).notNull()
                t.column("account_name", .text).notNull()
                t.column("display_account_name", .text).notNull()
                t.column("type", .text).notNull()
                t.column("secret", .blob).notNull()
                t.column("algorithm", .text).notNull()
                t.column("digits", .integer).notNull()
                t.column("period", .integer).notNull()
                t.column("counter", .integer).notNull()
                t.column("created_at", .double).notNull()
                t.column("image_url", .text)
                t.column("background_color", .text)
                t.column("policies", .text)
                t.column("locking_policy", .text)
                t.column("is_locked", .boolean).notNull()
            }
            try db.create(index: "idx_oath_issuer", on: "mfa_oath_data", columns: ["issuer"])
            try db.create(index: "idx_oath_created_at", on: "mfa_oath_data", columns: ["created_at", "id"])
        }
        migrator.registerMigration("v2: HOTP counter ledger") { db in
            // One row: the JSON map of counters by key fingerprint, sealed like a secret.
            try db.create(table: "coffer_hotp_counters") { t in
                t.column("id", .integer).primaryKey().check { $0 == 1 }
                t.column("ledger", .blob).notNull()
            }
        }
        return migrator
    }
}
