import Logging
import PostgresNIO

/// Coffer's tables in PostgreSQL, as versioned migrations (data, applied in order).
///
/// Sealed values and secrets are `bytea`: AES-256-GCM envelopes made under a key from
/// `coffer_keys`, bound to their (namespace, key) or, for the authenticator, to their owner,
/// row and the columns that decide which code is shown. Everything else is plain, so lookups
/// are indexed queries. Each table is scoped by `owner` (one user of an authentication
/// service) or `namespace` (one storage), so many tenants share one database.
enum PostgresSchema {
    struct Migration: Sendable {
        let version: Int
        let name: String
        let statements: [String]
    }

    /// Every migration, oldest first. Append; never change one that has shipped.
    static let migrations: [Migration] = [
        Migration(version: 1, name: "keys, values, authenticator records", statements: [
            """
            CREATE TABLE coffer_keys (
                alias text NOT NULL, id integer NOT NULL CHECK (id > 0),
                wrapped bytea NOT NULL, kek_fingerprint text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (alias, id))
            """,
            """
            CREATE TABLE coffer_values (
                namespace text NOT NULL, key text NOT NULL, value bytea NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (namespace, key))
            """,
            """
            CREATE TABLE coffer_accounts (
                owner text NOT NULL, issuer text NOT NULL, account_name text NOT NULL,
                display_issuer text, display_account_name text, image_url text, background_color text,
                time_added double precision NOT NULL, policies text, locking_policy text, is_locked boolean NOT NULL,
                PRIMARY KEY (owner, issuer, account_name))
            """,
            """
            CREATE TABLE coffer_mechanisms (
                owner text NOT NULL, mechanism_uuid text NOT NULL, issuer text NOT NULL, account_name text NOT NULL,
                type text NOT NULL, secret bytea NOT NULL, algorithm text NOT NULL, digits integer NOT NULL,
                period integer NOT NULL, counter bigint NOT NULL, uid text, resource_id text,
                time_added double precision NOT NULL, registration_endpoint text, authentication_endpoint text,
                message_id text, challenge bytea,
                PRIMARY KEY (owner, mechanism_uuid),
                UNIQUE (owner, issuer, account_name, type),
                FOREIGN KEY (owner, issuer, account_name) REFERENCES coffer_accounts ON DELETE RESTRICT)
            """,
            """
            CREATE TABLE coffer_notifications (
                owner text NOT NULL, mechanism_uuid text NOT NULL, message_id text NOT NULL, challenge bytea NOT NULL,
                ttl integer NOT NULL, time_added double precision NOT NULL, pending boolean NOT NULL, approved boolean NOT NULL,
                load_balance_key text, message text, custom_payload text, numbers_challenge text, context_info text,
                push_type text NOT NULL,
                PRIMARY KEY (owner, mechanism_uuid, message_id),
                FOREIGN KEY (owner, mechanism_uuid) REFERENCES coffer_mechanisms ON DELETE RESTRICT)
            """,
            "CREATE INDEX coffer_notifications_by_time ON coffer_notifications (owner, time_added, message_id)",
            """
            CREATE TABLE coffer_push_tokens (
                owner text PRIMARY KEY, token_id text NOT NULL, time_added double precision NOT NULL)
            """,
        ]),
        // Owners as a boundary: a key ring of an owner's own (`owner` in `coffer_keys`, `''` for
        // the shared ring), and row-level security so that a database role other than the
        // tables' owner (and its members, and superusers) sees and writes only the rows whose
        // owner is its own name. With peer authentication over a Unix socket, that name is the
        // operating-system user's.
        Migration(version: 2, name: "owner key rings, row-level security by role", statements: [
            "ALTER TABLE coffer_keys ADD COLUMN owner text NOT NULL DEFAULT ''",
            "ALTER TABLE coffer_keys DROP CONSTRAINT coffer_keys_pkey",
            "ALTER TABLE coffer_keys ADD PRIMARY KEY (owner, alias, id)",
        ] + ["coffer_accounts", "coffer_mechanisms", "coffer_notifications", "coffer_push_tokens"].flatMap { table in [
            "ALTER TABLE \(table) ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY coffer_own_rows ON \(table) USING (owner = current_user) WITH CHECK (owner = current_user)",
        ] } + [
            "ALTER TABLE coffer_keys ENABLE ROW LEVEL SECURITY",
            // The shared ring is readable (it opens only with the instances' key-encryption key),
            // never changed, moved or deleted by such a role: it writes only its own ring.
            "CREATE POLICY coffer_read_keys ON coffer_keys FOR SELECT USING (owner = '' OR owner = current_user)",
            "CREATE POLICY coffer_add_keys ON coffer_keys FOR INSERT WITH CHECK (owner = current_user)",
            "CREATE POLICY coffer_change_keys ON coffer_keys FOR UPDATE USING (owner = current_user) WITH CHECK (owner = current_user)",
            "CREATE POLICY coffer_remove_keys ON coffer_keys FOR DELETE USING (owner = current_user)",
        ]),
        // Ping's current authenticator storage (PostgresOathStorage, PostgresPushStorage): Android's
        // tables and columns with an owner in front of every key, the secret, challenges, cookies
        // and device tokens sealed, and the same row-level security as the tables above.
        // Notifications carry no foreign key (Ping stores one for a credential it does not know);
        // removing a credential deletes its notifications in the same transaction instead.
        Migration(version: 3, name: "Ping's OATH and push storage", statements: [
            """
            CREATE TABLE coffer_oath_credentials (
                owner text NOT NULL, id text NOT NULL, user_id text, resource_id text, issuer text NOT NULL,
                display_issuer text NOT NULL, account_name text NOT NULL, display_account_name text NOT NULL, type text NOT NULL,
                secret bytea NOT NULL, algorithm text NOT NULL, digits integer NOT NULL, period integer NOT NULL,
                counter bigint NOT NULL, created_at double precision NOT NULL, image_url text, background_color text,
                policies text, locking_policy text, is_locked boolean NOT NULL,
                PRIMARY KEY (owner, id))
            """,
            "CREATE INDEX coffer_oath_credentials_by_time ON coffer_oath_credentials (owner, created_at, id)",
            """
            CREATE TABLE coffer_push_credentials (
                owner text NOT NULL, id text NOT NULL, user_id text, resource_id text NOT NULL, issuer text NOT NULL,
                display_issuer text NOT NULL, account_name text NOT NULL, display_account_name text NOT NULL,
                server_endpoint text NOT NULL, shared_secret bytea NOT NULL, platform text NOT NULL,
                created_at double precision NOT NULL, image_url text, background_color text, policies text,
                locking_policy text, is_locked boolean NOT NULL,
                PRIMARY KEY (owner, id))
            """,
            """
            CREATE TABLE coffer_push_notifications (
                owner text NOT NULL, id text NOT NULL, credential_id text NOT NULL, message_id text NOT NULL,
                message_text text, custom_payload text, challenge bytea, numbers_challenge text, amlb_cookie bytea,
                context_info text, push_type text NOT NULL, ttl integer NOT NULL, pending boolean NOT NULL,
                approved boolean NOT NULL, created_at double precision NOT NULL, sent_at double precision,
                responded_at double precision,
                PRIMARY KEY (owner, id))
            """,
            "CREATE INDEX coffer_push_notifications_by_time ON coffer_push_notifications (owner, created_at, id)",
            "CREATE INDEX coffer_push_notifications_by_credential ON coffer_push_notifications (owner, credential_id, created_at, id)",
            "CREATE INDEX coffer_push_notifications_by_message ON coffer_push_notifications (owner, message_id, created_at, id)",
            // Pending and not yet expired, by when they expire: expired ones, however many, are never visited.
            "CREATE INDEX coffer_push_notifications_pending ON coffer_push_notifications (owner, (created_at + ttl)) WHERE pending",
            """
            CREATE TABLE coffer_push_device_tokens (
                owner text NOT NULL, id text NOT NULL, token bytea NOT NULL, created_at double precision NOT NULL,
                is_current boolean NOT NULL,
                PRIMARY KEY (owner, id))
            """,
            // One current token per owner: two processes storing a token at once cannot both win.
            "CREATE UNIQUE INDEX coffer_push_device_tokens_current ON coffer_push_device_tokens (owner) WHERE is_current",
        ] + ["coffer_oath_credentials", "coffer_push_credentials", "coffer_push_notifications", "coffer_push_device_tokens"].flatMap { table in [
            "ALTER TABLE \(table) ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY coffer_own_rows ON \(table) USING (owner = current_user) WITH CHECK (owner = current_user)",
        ] }),
        // The HOTP counter ledger (`PostgresStorageClient` as `HOTPCounterLedger`): one sealed row
        // per owner, raised under a row lock, so a secret removed and added again goes on from
        // its highest counter on every instance.
        Migration(version: 4, name: "HOTP counter ledger", statements: [
            "CREATE TABLE coffer_hotp_counters (owner text PRIMARY KEY, ledger bytea NOT NULL)",
            "ALTER TABLE coffer_hotp_counters ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY coffer_own_rows ON coffer_hotp_counters USING (owner = current_user) WITH CHECK (owner = current_user)",
        ]),
        // The same memory for Ping's OATH storage (PostgresOathStorage): a row of its own per
        // owner, sealed under that storage's key ring and binding.
        Migration(version: 5, name: "HOTP counter ledger of Ping's OATH storage", statements: [
            "CREATE TABLE coffer_oath_hotp_counters (owner text PRIMARY KEY, ledger bytea NOT NULL)",
            "ALTER TABLE coffer_oath_hotp_counters ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY coffer_own_rows ON coffer_oath_hotp_counters USING (owner = current_user) WITH CHECK (owner = current_user)",
        ]),
        // An account's note, groups, favourite mark and icon name (AccountDetails), sealed like
        // a secret and bound to its owner and account; NULL for none.
        Migration(version: 6, name: "account details, sealed", statements: [
            "ALTER TABLE coffer_accounts ADD COLUMN details bytea",
        ]),
    ]

    /// The newest version this build knows.
    static var latest: Int { migrations.last?.version ?? 0 }

    /// An arbitrary, fixed advisory-lock key: "coffer" in ASCII. Every instance migrating takes
    /// it, so ten starting at once migrate exactly once.
    static let lockKey: Int64 = 0x636f_6666_6572

    /// Brings the database to ``latest`` under the advisory lock, in one transaction (a
    /// migration is all or nothing); refuses a database a newer Coffer has migrated further.
    /// Returns the versions applied now.
    @discardableResult
    static func migrate(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.committed(logger: logger) { connection in
            try await connection.rows("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.rows("""
                CREATE TABLE IF NOT EXISTS coffer_schema (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            var current = 0
            for row in try await connection.rows("SELECT coalesce(max(version), 0) FROM coffer_schema", logger: logger) {
                current = try row.decode(Int.self)
            }
            if current > latest {
                throw PostgresStorageError(.schemaTooNew, "The database's Coffer schema is version \(current), newer than this "
                    + "Coffer knows (\(latest)): it was migrated by a newer version. Upgrade Coffer; nothing was changed.")
            }
            var applied: [Int] = []
            for migration in migrations where migration.version > current {
                for statement in migration.statements {
                    try await connection.rows(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.rows("INSERT INTO coffer_schema (version, name) VALUES (\(migration.version), \(migration.name))", logger: logger)
                applied.append(migration.version)
            }
            return applied
        }
    }

    /// The schema version the database is at (0 before any migration).
    static func version(_ client: PostgresClient, logger: Logger) async throws -> Int {
        let exists = try await client.rows("SELECT to_regclass('coffer_schema') IS NOT NULL", logger: logger)
        guard try exists.first?.decode(Bool.self) == true else { return 0 }
        let rows = try await client.rows("SELECT coalesce(max(version), 0) FROM coffer_schema", logger: logger)
        return try rows.first?.decode(Int.self) ?? 0
    }
}
