import CofferAuthenticator
import CofferPostgres
import CofferStorage
import Foundation
import Logging

/// `--backend postgres`: accounts in a PostgreSQL database, configured from the environment
/// (never from arguments, which other users can read in `ps`):
///
/// - `COFFER_DATABASE_URL`: where the database is, libpq-style
///   (`postgresql://user@/db?host=/run/postgresql` for a Unix socket).
/// - `COFFER_DATABASE_KEK`: the key-encryption key: a file (default `keys/postgres.kek` in the
///   data directory, made with `coffer key new-kek`), or `keyring` for the OS keyring.
/// - `COFFER_OWNER`: whose accounts (default: your login name). Owners share the database and
///   see nothing of each other's.
enum PostgresBackend {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The database URL, or an error saying how to give it.
    static func url() throws -> PostgresConnectionURL {
        guard let text = environment["COFFER_DATABASE_URL"], !text.isEmpty else {
            throw CommandFailure("the postgres backend needs COFFER_DATABASE_URL, for example "
                + "postgresql://coffer@/coffer?host=/run/postgresql (a Unix socket)")
        }
        return try PostgresConnectionURL(text)
    }

    /// The default key-encryption key file in `directory`.
    static func defaultKEKPath(in directory: URL) -> String {
        directory.appendingPathComponent("keys/postgres.kek").path
    }

    /// Where the key-encryption key is, in words.
    static func kekLocation(in directory: URL) -> String {
        let setting = environment["COFFER_DATABASE_KEK"] ?? ""
        if setting == "keyring" { return "the OS keyring (alias org.coffer.postgres.kek)" }
        return "the file " + (setting.isEmpty ? defaultKEKPath(in: directory) : setting)
    }

    /// The key-encryption key, from `COFFER_DATABASE_KEK` or the default file.
    static func kek(in directory: URL) throws -> KeyEncryptionKey {
        let setting = environment["COFFER_DATABASE_KEK"] ?? ""
        if setting == "keyring" { return try SyncBridge.run { try await KeyEncryptionKey.fromKeyring() } }
        return try KeyEncryptionKey.load(fromFile: setting.isEmpty ? defaultKEKPath(in: directory) : setting)
    }

    /// Whose accounts: `COFFER_OWNER`, else the login name.
    static func owner() -> String {
        if let owner = environment["COFFER_OWNER"], !owner.isEmpty { return owner }
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return "uid-\(geteuid())"
    }

    /// Connects (the pool runs until the process ends), brings the schema up to date, and
    /// returns a client for the owner.
    static func open(directory: URL, logger: Logger) throws -> PostgresStorageClient {
        var options = PostgresDatabase.Configuration.Options()
        options.listensForChanges = false  // the tool keeps no cached values to keep in step
        options.maximumConnections = 4
        let database = try PostgresDatabase(configuration: .init(url: try url(), keyEncryptionKey: try kek(in: directory), options: options),
                                            logger: logger)
        // A command is short: the pool runs in the background for the life of the process.
        Task.detached { try? await database.run() }
        _ = try SyncBridge.run { try await database.migrate() }
        return PostgresStorageClient(database: database, owner: owner(), logger: logger)
    }
}
