import CofferMFAEngine
import CofferAuthenticator
import CofferPostgres
import CofferPostgresAuthenticator
import CofferStorage
import Foundation
import Logging

/// `--backend postgres`: accounts in a PostgreSQL database, configured from the environment
/// (never from arguments, which other users can read in `ps`):
///
/// - `COFFER_DATABASE_URL`: where the database is, libpq-style
///   (`postgresql://user@/db?host=/run/postgresql` for a Unix socket).
/// - `COFFER_DATABASE_KEK`: the key-encryption key: a file (default `keys/postgres.kek` in the
///   data directory, made with `coffer key new-kek`), `keyring` for the OS keyring,
///   `credential:NAME` for a systemd credential, or `tpm:FILE` for a TPM-sealed file.
/// - `COFFER_OWNER`: whose accounts (default: your login name). Owners share the database; each
///   has a key ring of its own, wrapped under its own key-encryption key, so one owner's key
///   opens nothing of another's, and with row-level security (a database role per person, peer
///   authentication) the database shows a role only its own rows.
enum PostgresBackend {
    /// The database URL, or an error saying how to give it.
    static func url() throws -> PostgresConnectionURL {
        guard let text = ProcessEnvironment.value("COFFER_DATABASE_URL"), !text.isEmpty else {
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
        let setting = ProcessEnvironment.value("COFFER_DATABASE_KEK") ?? ""
        if setting == "keyring" { return "the OS keyring (alias org.coffer.postgres.kek)" }
        if setting.hasPrefix("credential:") { return "the systemd credential \(setting.dropFirst("credential:".count))" }
        if setting.hasPrefix("tpm:") { return "the TPM-sealed file \(setting.dropFirst("tpm:".count))" }
        return "the file " + (setting.isEmpty ? defaultKEKPath(in: directory) : setting)
    }

    /// The key-encryption key, from `COFFER_DATABASE_KEK` or the default file.
    static func kek(in directory: URL) throws -> KeyEncryptionKey {
        let setting = ProcessEnvironment.value("COFFER_DATABASE_KEK") ?? ""
        if setting == "keyring" { return try SyncBridge.run { try await KeyEncryptionKey.fromKeyring() } }
        if setting.hasPrefix("credential:") { return try KeyEncryptionKey.fromCredential(named: String(setting.dropFirst("credential:".count))) }
        if setting.hasPrefix("tpm:") {
            let path = String(setting.dropFirst("tpm:".count))
            TPMNetworkWarning.warnIfNetwork()
            return try SyncBridge.run { try await KeyEncryptionKey.fromTPM(file: path) }
        }
        return try KeyEncryptionKey.load(fromFile: setting.isEmpty ? defaultKEKPath(in: directory) : setting)
    }

    /// Whose accounts: `COFFER_OWNER`, else the login name.
    static func owner() -> String {
        if let owner = ProcessEnvironment.value("COFFER_OWNER"), !owner.isEmpty { return owner }
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return "uid-\(geteuid())"
    }

    /// Connects (the pool runs until the process ends), brings the schema up to date, and
    /// returns a client for the owner.
    static func open(directory: URL, logger: Logger) throws -> PostgresStorageClient {
        let url = try url()
        // A socket that is not there fails now, not after the connect timeout.
        if let socket = url.socketPath, !FileManager.default.fileExists(atPath: socket) {
            throw CommandFailure("no PostgreSQL server is listening at \(socket) (there is no socket file); "
                + "start the server, or check host= in COFFER_DATABASE_URL", status: .unavailable)
        }
        try url.checkSocket()  // before the key-encryption key: who answers there comes first
        var options = CofferDatabase.Configuration.Options()
        options.listensForChanges = false  // the tool keeps no cached values to keep in step
        options.maximumConnections = 4
        let database = try CofferDatabase(configuration: .init(url: url, keyEncryptionKey: try kek(in: directory), options: options),
                                            logger: logger)
        // The pool runs in the command's task group until the command is done; a server that
        // cannot be reached makes each operation fail with `.unavailable` at its deadline.
        try CommandServices.start(database)
        let client = try ownClient(database, logger: logger)
        // Up front: a database that cannot be reached or keys that do not open stop the
        // command here, instead of reads answering "nothing stored".
        _ = try SyncBridge.run { try await database.migrate() }
        try SyncBridge.run { try await client.verifyKeyRing() }
        try adoptOwnKeyRing(client)
        return client
    }

    /// The owner's client, sealing under the owner's own key ring (wrapped under the
    /// key-encryption key this user holds).
    static func ownClient(_ database: CofferDatabase, logger: Logger) throws -> PostgresStorageClient {
        try PostgresStorageClient(database: database, owner: owner(), keyEncryptionKey: database.configuration.keyEncryptionKey, logger: logger)
    }

    /// While the owner's ring has no key yet, moves secrets sealed under the shared ring (by a
    /// Coffer from before owners had rings of their own) into it, once.
    static func adoptOwnKeyRing(_ client: PostgresStorageClient) throws {
        guard try SyncBridge.run({ try await client.keys.primaryKey(for: client.keyAlias) }) == nil else { return }
        let moved = try SyncBridge.run { try await client.moveToOwnKeyRing() }
        if moved > 0 {
            StandardStreams.note("coffer: \(moved) secret(s) of owner \(client.owner) moved from the database's shared key ring to a key ring "
                + "of the owner's own, under your key-encryption key")
        }
    }

    /// Stops a command whose reads failed in the database (it went away, a key would not open):
    /// the spec's synchronous reads answer `nil` or `[]` then, which must not be reported as
    /// "no accounts" or "no match".
    static func requireAnswered(_ storage: any StorageClient) throws {
        guard let postgres = storage as? PostgresStorageClient, let failure = postgres.lastError as? PostgresStorageError else { return }
        throw CommandFailure(failure.message, status: ExitStatus.of(failure))
    }
}
