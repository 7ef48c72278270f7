import CofferMFAEngine
import Foundation
import Logging
import CofferStorage

/// The spec's static face of the authenticator: register a storage client, then start.
///
/// ```swift
/// let customStorageClient = CustomStorageClient()
/// FRAClient.setStorage(storage: customStorageClient)
/// FRAClient.start()
/// ```
///
/// The storage cannot change once started: `setStorage(storage:)` then returns `false` and logs,
/// and the throwing ``setStorage(_:)`` throws ``AuthenticatorError/invalidStateForChangingStorage``.
/// Without a registered storage, `start()` opens ``DefaultAuthenticatorStorage``.
public enum FRAClient {
    // The static state is read and written only while `lock` is held; the storage client it
    // holds need not be thread-safe, which is why it is `nonisolated(unsafe)` rather than in a
    // Mutex (a Mutex needs its value to be sendable into it).
    private static let lock = NSLock()
    nonisolated(unsafe) private static var pendingStorage: (any StorageClient)?
    nonisolated(unsafe) private static var started: AuthenticatorClient?
    private static let logger = Logger(label: "org.coffer.authenticator")

    /// Registers the storage client to use. Returns `false` (and logs) after ``start()``.
    @discardableResult
    public static func setStorage(storage: any StorageClient) -> Bool {
        do {
            try setStorage(storage)
            return true
        } catch {
            logger.error("FRAClient.setStorage(storage:) refused", metadata: ["reason": "\(error.errorDescription ?? "")"])
            return false
        }
    }

    /// Registers the storage client to use, or throws
    /// ``AuthenticatorError/invalidStateForChangingStorage`` after ``start()``.
    public static func setStorage(_ storage: any StorageClient) throws(AuthenticatorError) {
        lock.lock()
        defer { lock.unlock() }
        guard started == nil else { throw .invalidStateForChangingStorage }
        pendingStorage = storage
    }

    /// Starts the authenticator with the registered storage (or the default one) and returns
    /// it; returns the running one when already started, and `nil` (logged) when the default
    /// storage cannot be opened.
    @discardableResult
    public static func start() -> AuthenticatorClient? {
        do {
            return try start(configuration: AuthenticatorConfiguration())
        } catch {
            logger.error("FRAClient.start() failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Starts with `configuration` (its storage wins over a registered one), or throws why the
    /// storage cannot be opened.
    @discardableResult
    public static func start(configuration: AuthenticatorConfiguration) throws -> AuthenticatorClient {
        lock.lock()
        defer { lock.unlock() }
        if let started { return started }
        var configuration = configuration
        if configuration.storage == nil { configuration.storage = pendingStorage }
        let client = try configuration.makeClient()
        started = client
        return client
    }

    /// The running authenticator, once started.
    public static var shared: AuthenticatorClient? {
        lock.withLock { started }
    }

    /// Stops and forgets the running authenticator and the registered storage, so that another
    /// storage can be set. For tests and for apps that sign the user out completely.
    public static func reset() {
        lock.withLock {
            started = nil
            pendingStorage = nil
        }
    }
}

/// The legacy authenticator's settings, built the way the spec's configuration block is:
///
/// ```swift
/// let config = AuthenticatorConfiguration.build { config in
///     config.storage = KeychainStorageClient()
///     config.enableCredentialCache = false
///     config.logger = customLogger
/// }
/// ```
///
/// Before 0.3.0 this type was called `OathConfiguration`; that name now belongs to Ping's
/// current generation (`CofferOath`), so the spec's snippet compiles unqualified with both
/// modules imported.
public struct AuthenticatorConfiguration {
    /// The storage client; `nil` means ``DefaultAuthenticatorStorage``.
    public var storage: (any StorageClient)?
    /// Keep the assembled account list in memory between calls.
    public var enableCredentialCache = false
    /// Where the authenticator logs.
    public var logger = Logger(label: "org.coffer.authenticator")

    /// The defaults.
    public init() {}

    /// A configuration made by `configure`.
    public static func build(_ configure: (inout AuthenticatorConfiguration) -> Void) -> AuthenticatorConfiguration {
        var configuration = AuthenticatorConfiguration()
        configure(&configuration)
        return configuration
    }

    /// A client with these settings, opening the default storage when none is set. It keeps
    /// the HOTP counter rule (``HOTPCounterFloor``) with the storage's ledger: the default
    /// storage's `hotp-counters` beside it, or the storage itself when it is one
    /// (``KeychainStorageClient``, PostgreSQL's client); a storage of your own without a ledger
    /// is still kept from holding one secret under two accounts.
    public func makeClient() throws -> AuthenticatorClient {
        if let storage {
            return AuthenticatorClient(storage: storage, ledger: storage as? any HOTPCounterLedger,
                                       enableCredentialCache: enableCredentialCache, logger: logger)
        }
        let storage = try DefaultAuthenticatorStorage.open(logger: logger)
        return AuthenticatorClient(storage: storage, ledger: SealedCounterLedgerFile(dataDirectory: DataDirectory.default, store: storage),
                                   enableCredentialCache: enableCredentialCache, logger: logger)
    }
}

/// The storage the authenticator uses when you register none: a ``SQLiteStorageClient`` in
/// `<data directory>/authenticator.sqlite`, its secrets sealed with a key from the OS keyring
/// when it is usable and from a 0600 key file beside the database otherwise.
///
/// The choice is made once, when the database is created, and recorded in
/// `authenticator.keystore` beside it (see `KeyStoreSelection`): later runs use the recorded
/// key store and fail with a clear error when it is not available, rather than sealing new
/// secrets under a second key.
public enum DefaultAuthenticatorStorage {
    /// The key alias of the default storage's encryption key.
    public static let keyAlias = "org.coffer.authenticator"
    /// The file beside the database that records where its key is.
    public static let keyStoreRecord = "authenticator.keystore"

    /// The database file in `directory`.
    public static func databaseURL(in directory: URL) -> URL {
        directory.appendingPathComponent("authenticator.sqlite")
    }

    /// Where the key is, as recorded in `directory` (nil before the first open).
    public static func recordedKeyLocation(in directory: URL) throws -> KeyStoreSelection.Location? {
        try KeyStoreSelection.recordedLocation(in: directory, record: keyStoreRecord)
    }

    /// The key move of the default storage in `directory` (see `KeyMove`): the key stores of
    /// every place, asking for a TPM PIN or a passphrase with `tpmPIN` and `passphrase`.
    public static func keyMove(
        in directory: URL, tpmPIN: (@Sendable () async throws -> String)? = nil, passphrase: (@Sendable () async throws -> String)? = nil
    ) -> KeyMove {
        KeyMove(directory: directory, record: keyStoreRecord, alias: keyAlias) { location in
            KeyStoreSelection.store(location, in: directory, tpmPIN: tpmPIN, passphrase: passphrase)
        }
    }

    /// Opens the default storage in `directory` (default: `DataDirectory.default`).
    ///
    /// A key move a killed process left is finished or undone first (``keyMove(in:tpmPIN:passphrase:)``),
    /// and the client holds the directory's key-move lock shared for as long as it lives: a key
    /// move waits for it (at most `KeyMove.patience`), so the key never leaves from under it.
    ///
    /// - Parameters:
    ///   - directory: The data directory; `DataDirectory.default` when `nil`.
    ///   - logger: Receives the key store choice and warnings.
    ///   - tpmPIN: Answers when the key is sealed by the TPM with a PIN.
    ///   - passphrase: Answers when the key is under a passphrase.
    ///   - connections: A pool (the default), or one connection for a short-lived process
    ///     (``SQLiteStorageClient/Connections``).
    public static func open(
        directory: URL? = nil, logger: Logger = Logger(label: "org.coffer.authenticator"),
        tpmPIN: (@Sendable () async throws -> String)? = nil, passphrase: (@Sendable () async throws -> String)? = nil,
        connections: SQLiteStorageClient.Connections = .pool
    ) throws -> SQLiteStorageClient {
        let directory = directory ?? DataDirectory.default
        // A key move killed halfway is finished (or rolled back) before the key is used, so no
        // copy of the key stays where the record does not say it is.
        let move = keyMove(in: directory, tpmPIN: tpmPIN, passphrase: passphrase)
        do {
            // A short wait: the journal may be a move's under way, which then finishes it itself.
            if let recovery = try SyncBridge.run({ try await move.finishInterrupted(waitingAtMost: .milliseconds(300)) }) {
                logger.notice("finished an interrupted key move", metadata: ["directory": "\(directory.path)", "recovery": "\(recovery)"])
            }
        } catch {
            logger.warning("an interrupted key move could not be finished yet; the next open tries again",
                           metadata: ["directory": "\(directory.path)", "reason": "\(error)"])
        }
        // The first use chooses where the key lives under the move lock held exclusively: two
        // first commands at once (one in a session that reaches the keyring, one that does not)
        // agree on one place, whose key store makes one key for both (createKey is atomic).
        if try recordedKeyLocation(in: directory) == nil {
            try SyncBridge.run {
                try await move.exclusively {
                    _ = try KeyStoreSelection.recorded(in: directory, record: keyStoreRecord, logger: logger, tpmPIN: tpmPIN,
                                                       passphrase: passphrase)
                }
            }
        }
        // Held from before the record is read until the client goes: no key move takes the key
        // away from under it (a command sealing with a key that was just moved would make a
        // second one).
        let hold = try SyncBridge.run { try await move.holdAgainstMoves() }
        let keyStore = try KeyStoreSelection.recorded(in: directory, record: keyStoreRecord, logger: logger, tpmPIN: tpmPIN,
                                                      passphrase: passphrase)
        let client = try SQLiteStorageClient(
            path: databaseURL(in: directory).path,
            encryptor: AESGCMEncryptor(keyAlias: keyAlias, keyStore: keyStore), logger: logger, connections: connections)
        client.keep(hold)
        return client
    }
}
