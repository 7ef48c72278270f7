import CofferStorage
import Foundation
import PostgresNIO

/// Why a PostgreSQL operation of Coffer's failed.
///
/// A struct with an extensible ``Code`` (as postgres-nio's `PSQLError` is), so new cases do not
/// break callers. The message names what happened and what to do; it never contains a stored
/// value, a secret or a password, and the server's own detail is only in ``underlying``.
public struct PostgresStorageError: Error, Sendable {
    /// What kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The code's name (`unavailable`, `server`, …).
        public let description: String
        private init(_ name: String) { description = name }

        /// The server could not be reached within the connect timeout, or went away.
        public static let unavailable = Code("unavailable")
        /// The database was written by a newer version of Coffer (its schema is ahead).
        public static let schemaTooNew = Code("schemaTooNew")
        /// The key-encryption key does not open the database's keys.
        public static let wrongKeyEncryptionKey = Code("wrongKeyEncryptionKey")
        /// The configuration (URL, key file) cannot be used.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// The server refused a statement (a constraint, a permission); see ``sqlState``.
        public static let server = Code("server")
        /// Another instance rotated the key ring each time a write sealed and tried again;
        /// nothing was written.
        public static let keyRingRotating = Code("keyRingRotating")
    }

    /// What kind of failure: match on it (`error.code == .unavailable`) to decide whether to retry.
    public let code: Code
    /// What happened and what to do.
    public let message: String
    /// The server's SQLSTATE, for ``Code/server``.
    public let sqlState: String?
    /// The error underneath (a `PSQLError`, a channel error), kept for debugging.
    public let underlying: (any Error)?

    package init(_ code: Code, _ message: String, sqlState: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.underlying = underlying
    }

    package static func invalidConfiguration(_ message: String) -> PostgresStorageError {
        PostgresStorageError(.invalidConfiguration, message + ".")
    }

    /// `error` from postgres-nio, as one of ours: connection failures are ``Code/unavailable``,
    /// what the server refused is ``Code/server`` with its SQLSTATE. Coffer's own errors, thrown
    /// by the work inside an operation, pass unchanged.
    static func from(_ error: any Error, during operation: String) -> any Error {
        if error is PostgresStorageError || error is StorageError || error is EncryptorError || error is any CofferOperationError
            || error is CancellationError {
            return error  // Coffer's own, thrown inside the operation: already says what happened.
        }
        if let transaction = error as? PostgresTransactionError {
            // What went wrong inside the transaction (it was rolled back), else at its edges.
            if let inner = transaction.closureError ?? transaction.beginError ?? transaction.commitError {
                return from(inner, during: operation)
            }
        }
        if let psql = error as? PSQLError {
            switch psql.code {
            case .server:
                let state = psql.serverInfo?[.sqlState]
                return PostgresStorageError(.server, "The database refused to \(operation) (SQLSTATE \(state ?? "?")).",
                                            sqlState: state, underlying: error)
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed, .uncleanShutdown, .queryCancelled:
                return PostgresStorageError(.unavailable, "The database could not \(operation): the connection failed or was closed "
                    + "(\(psql.code)). Check that the server is running and reachable. A write is one transaction: it took effect whole or not at all.", underlying: error)
            default:
                return PostgresStorageError(.server, "The database could not \(operation) (\(psql.code)).", underlying: error)
            }
        }
        return PostgresStorageError(.unavailable, "The database could not \(operation): \(type(of: error)).", underlying: error)
    }
}

/// An error of Coffer's own that the work inside a database operation throws (the authenticator
/// stores' `StorageClientError`): it already says what happened, and passes through unchanged.
package protocol CofferOperationError: Error {}

extension PostgresStorageError {
    /// The database's own failure inside an encryptor's or a storage error (the key ring could
    /// not be read, or not opened with this key-encryption key), if that is what `error` is.
    package static func databaseCause(of error: any Error) -> PostgresStorageError? {
        switch error {
        case let error as PostgresStorageError: error
        case StorageError.decryptionFailed(_, let cause) as StorageError: databaseCause(of: cause)
        case EncryptorError.failedToEncrypt(let cause?) as EncryptorError, EncryptorError.failedToDecrypt(let cause?) as EncryptorError:
            databaseCause(of: cause)
        default: nil
        }
    }
}

extension PostgresStorageError: LocalizedError, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The ``message``.
    public var errorDescription: String? { message }
    /// The ``message``: never a stored value, a secret or a password.
    public var description: String { message }
    /// The ``message`` too: the server's detail stays in ``underlying``, for code that asks.
    public var debugDescription: String { message }
    /// The code, message and SQLSTATE, without ``underlying``, whose own rendering holds the
    /// server's message and the statement.
    public var customMirror: Mirror {
        Mirror(self, children: ["code": code, "message": message, "sqlState": sqlState as Any], displayStyle: .struct)
    }
}
