import GRDB

/// The SQLite schema of ``SQLitePushStorage``, as versioned migrations: Android's tables and
/// column names (`mfa_push_credentials`, `mfa_push_notifications`, `mfa_push_device_tokens`),
/// with the shared secret and the challenge sealed in BLOBs and times as REAL seconds since
/// 2001-01-01 (exact; Android writes milliseconds).
///
/// Notifications carry no foreign key: Ping stores a notification for a credential it does not
/// know. Removing a credential deletes its notifications in the same transaction instead.
enum SQLitePushSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: push credentials, notifications, device tokens") { db in
            try db.create(table: "mfa_push_credentials") { t in
                t.column("id", .text).primaryKey()
                t.column("user_id", .text)
                t.column("resource_id", .text).notNull()
                t.column("issuer", .text).notNull()
                t.column("display_issuer", .text).notNull()
                t.column("account_name", .text).notNull()
                t.column("display_account_name", .text).notNull()
                t.column("server_endpoint", .text).notNull()
                t.column("shared_secret", .blob).notNull()
                t.column("platform", .text).notNull()
                t.column("created_at", .double).notNull()
                t.column("image_url", .text)
                t.column("background_color", .text)
                t.column("policies", .text)
                t.column("locking_policy", .text)
                t.column("is_locked", .boolean).notNull()
            }
            try db.create(table: "mfa_push_notifications") { t in
                t.column("id", .text).primaryKey()
                t.column("credential_id", .text).notNull()
                t.column("message_id", .text).notNull()
                t.column("message_text", .text)
                t.column("custom_payload", .text)
                t.column("challenge", .blob)
                t.column("numbers_challenge", .text)
                t.column("amlb_cookie", .blob)
                t.column("context_info", .text)
                t.column("push_type", .text).notNull()
                t.column("ttl", .integer).notNull()
                t.column("pending", .boolean).notNull()
                t.column("approved", .boolean).notNull()
                t.column("created_at", .double).notNull()
                t.column("sent_at", .double)
                t.column("responded_at", .double)
            }
            try db.create(index: "idx_notification_credential_id", on: "mfa_push_notifications", columns: ["credential_id", "created_at"])
            try db.create(index: "idx_notification_message_id", on: "mfa_push_notifications", columns: ["message_id"])
            try db.create(index: "idx_notification_created_at", on: "mfa_push_notifications", columns: ["created_at", "id"])
            try db.create(index: "idx_notification_pending", on: "mfa_push_notifications", columns: ["pending", "created_at"])
            try db.create(table: "mfa_push_device_tokens") { t in
                t.column("id", .text).primaryKey()
                t.column("token_id", .blob).notNull()
                t.column("created_at", .double).notNull()
                t.column("is_current", .boolean).notNull()
            }
        }
        migrator.registerMigration("v2: pending notifications by expiry") { db in
            // getPendingPushNotifications asks for `pending = 1 AND created_at + ttl >= now`:
            // this index answers it without visiting expired ones, however many there are.
            // It replaces the index by (pending, created_at), which SQLite preferred and which
            // walks every pending row, expired or not.
            try db.execute(sql: "DROP INDEX idx_notification_pending")
            try db.execute(sql: "CREATE INDEX idx_notification_pending_expiry ON mfa_push_notifications (created_at + ttl) WHERE pending = 1")
        }
        return migrator
    }
}
