import CofferStorage
import Foundation
import Logging

/// Where an authenticator keeps its accounts, and how a program chooses and opens it the way
/// the `coffer` tool does: an explicit choice, else `COFFER_BACKEND`, else the backend recorded
/// in the data directory (by a migration, so plain runs follow the accounts), else SQLite.
///
/// ```swift
/// let backend = try AuthenticatorBackend.chosen(explicit: nil, directory: DataDirectory.default)
/// let store = try backend.open(directory: DataDirectory.default)
/// let client = store.makeClient()   // the store's counter memory and trash wired in
/// ```
public enum AuthenticatorBackend: String, CaseIterable, Sendable {
    /// `authenticator.sqlite` in the data directory (``DefaultAuthenticatorStorage``): the default.
    case sqlite
    /// The OS keyring, one sealed item per object (``KeychainStorageClient``).
    case keychain
    /// A PostgreSQL database (`CofferPostgres`), opened by the caller's `postgres` opener.
    case postgres

    /// The file in the data directory that records where accounts are kept.
    public static let recordName = "authenticator.backend"

    /// The names, for messages: "sqlite, keychain or postgres".
    public static var names: String { "sqlite, keychain or postgres" }

    /// Why a backend could not be chosen.
    public enum SelectionError: Error, LocalizedError, Sendable {
        /// `COFFER_BACKEND` names no backend.
        case unknownInEnvironment(String)
        /// The record in the data directory names no backend.
        case unknownInRecord(path: String)
        /// PostgreSQL was chosen but no opener for it was given (it lives in `CofferPostgres`).
        case postgresNotLinked

        /// What is wrong and what to do.
        public var errorDescription: String? {
            switch self {
            case .unknownInEnvironment(let value):
                "COFFER_BACKEND is '\(value.prefix(40))'; for accounts it must be \(AuthenticatorBackend.names) (coffer store reads COFFER_STORE_BACKEND)"
            case .unknownInRecord(let path):
                "\(path) does not say \(AuthenticatorBackend.names); put one of them in it, or remove it"
            case .postgresNotLinked:
                "the postgres backend is opened through CofferPostgres: pass its opener to AuthenticatorBackend.open(directory:…:postgres:)"
            }
        }
    }

    /// The backend in effect: `explicit`, else `COFFER_BACKEND` in `environment` (this process's
    /// when nil), else the one recorded in `directory`, else ``sqlite``.
    public static func chosen(explicit: AuthenticatorBackend?, environment: [String: String]? = nil,
                              directory: URL) throws -> AuthenticatorBackend {
        if let explicit { return explicit }
        if let variable = environment.map({ $0["COFFER_BACKEND"] }) ?? ProcessEnvironment.value("COFFER_BACKEND"), !variable.isEmpty {
            guard let backend = AuthenticatorBackend(rawValue: variable) else { throw SelectionError.unknownInEnvironment(variable) }
            return backend
        }
        return try recorded(in: directory) ?? .sqlite
    }

    /// The backend recorded in `directory`, if any.
    public static func recorded(in directory: URL) throws -> AuthenticatorBackend? {
        let record = RecordFile(directory.appendingPathComponent(recordName))
        guard let text = try record.read() else { return nil }
        guard let backend = AuthenticatorBackend(rawValue: text) else { throw SelectionError.unknownInRecord(path: record.path) }
        return backend
    }

    /// Records `backend` in `directory` as where the accounts are (after a migration).
    public static func record(_ backend: AuthenticatorBackend, in directory: URL) throws {
        try RecordFile(directory.appendingPathComponent(recordName)).write(backend.rawValue)
    }

    /// Opens this backend's store of accounts, with its HOTP counter memory and (SQLite) trash.
    ///
    /// - Parameters:
    ///   - directory: The data directory (SQLite's file, its key record, ledger and trash).
    ///   - logger: Receives the key store choice and warnings.
    ///   - tpmPIN: Answers when the SQLite store's key is sealed by a TPM with a PIN.
    ///   - passphrase: Answers when the SQLite store's key is kept under a passphrase.
    ///   - trashDays: How long the SQLite store's trash keeps an entry.
    ///   - postgres: Opens the PostgreSQL store (`CofferPostgres`); required for ``postgres``.
    ///   - connections: How the SQLite store connects to its file: a pool (the default), or one
    ///     connection for a short-lived process (``SQLiteStorageClient/Connections``).
    public func open(directory: URL, logger: Logger = Logger(label: "org.coffer.authenticator"),
                     tpmPIN: (@Sendable () async throws -> String)? = nil, passphrase: (@Sendable () async throws -> String)? = nil,
                     trashDays: Int = 30, postgres: (() throws -> any StorageClient)? = nil,
                     connections: SQLiteStorageClient.Connections = .pool) throws -> AuthenticatorStore {
        switch self {
        case .sqlite:
            let storage = try DefaultAuthenticatorStorage.open(directory: directory, logger: logger, tpmPIN: tpmPIN, passphrase: passphrase,
                                                               connections: connections)
            return AuthenticatorStore(sqlite: storage, directory: directory, trashDays: trashDays)
        case .keychain:
            return AuthenticatorStore(storage: try KeychainStorageClient.make(logger: logger))
        case .postgres:
            guard let postgres else { throw SelectionError.postgresNotLinked }
            return AuthenticatorStore(storage: try postgres())
        }
    }
}

/// An opened store of accounts with what keeps its rules: its HOTP counter memory and its trash.
public struct AuthenticatorStore: @unchecked Sendable {
    // @unchecked Sendable: `storage` need not be Sendable; an AuthenticatorStore only carries it
    // to the AuthenticatorClient, which calls it under its lock. The other properties are Sendable.

    /// The storage client.
    public let storage: any StorageClient
    /// Its HOTP counter memory: the sealed file beside SQLite, the store itself for the keyring
    /// and PostgreSQL, `nil` for a store of your own that keeps none.
    public let ledger: (any HOTPCounterLedger)?
    /// Its trash (SQLite only; the other backends' removals are final).
    public let trash: (any AccountTrash)?

    /// The store in `storage`, its ledger the store itself when it is one, with no trash.
    public init(storage: any StorageClient) {
        self.storage = storage
        ledger = storage as? any HOTPCounterLedger
        trash = nil
    }

    /// The SQLite store in `directory`, with the ledger and trash beside it.
    public init(sqlite: SQLiteStorageClient, directory: URL, trashDays: Int = 30) {
        storage = sqlite
        let trash = SealedTrashDirectory(dataDirectory: directory, store: sqlite, keepDays: trashDays)
        ledger = trash.ledger
        self.trash = trash
    }

    /// A client over the store that keeps its rules (``AuthenticatorClient/init(storage:ledger:remembered:trash:enableCredentialCache:logger:clock:)``).
    public func makeClient(remembered: (@Sendable () throws -> [Mechanism])? = nil, enableCredentialCache: Bool = false,
                           logger: Logger = Logger(label: "org.coffer.authenticator")) -> AuthenticatorClient {
        AuthenticatorClient(storage: storage, ledger: ledger, remembered: remembered, trash: trash,
                            enableCredentialCache: enableCredentialCache, logger: logger)
    }
}
