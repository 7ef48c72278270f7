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
        migrator.registerMigration("v4: account details, sealed") { db in
            // An account's note, groups, favourite mark and icon name (AccountDetails) as JSON
            // sealed like a secret, bound to the account; NULL for none.
            try db.alter(table: "account") { t in t.add(column: "details", .blob) }
        }
        return migrator
    }
}
