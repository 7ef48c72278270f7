import Foundation
import Logging
import Synchronization

/// What a storage client keeps about its failures, since the ``StorageClient`` protocol can only
/// answer `false`, `nil` or `[]`: the last error, a count of records that could not be read,
/// and a log line for each (never with a secret).
package final class ClientDiagnostics: Sendable {
    private struct State {
        var last: (any Error)?
        /// Each unreadable record once, however often it was read.
        var unreadable: Set<String> = []
        var described: [String] = []
    }

    private let state = Mutex(State())
    /// How many unreadable records are described in ``unreadableRecords``.
    static let describedLimit = 100
    private let logger: Logger
    private let store: String

    /// - Parameter store: Names the store in log lines (a database path, a keyring service).
    package init(logger: Logger, store: String) {
        self.logger = logger
        self.store = store
    }

    package var lastError: (any Error)? { state.withLock { $0.last } }
    package var unreadableRecordCount: Int { state.withLock { $0.unreadable.count } }
    package var unreadableRecords: [String] { state.withLock { $0.described } }

    /// Runs `body`; on failure records and logs the error and returns `nil`.
    package func attempt<R>(_ operation: String, _ body: () throws -> R) -> R? {
        try? attemptThrowing(operation, body)
    }

    /// Runs `body`; on failure records and logs the error and throws it on.
    package func attemptThrowing<R>(_ operation: String, _ body: () throws -> R) throws -> R {
        do {
            let result = try body()
            logger.trace("\(operation) done", metadata: ["store": "\(store)"])
            return result
        } catch {
            record(error, operation: operation, message: "\(operation) failed")
            throw error
        }
    }

    /// Keeps `error` as the last one and logs it.
    package func record(_ error: any Error, operation: String, message: String) {
        state.withLock { $0.last = error }
        logger.error("\(message)", metadata: ["operation": "\(operation)", "error": "\(error)", "store": "\(store)"])
    }

    /// Logs a problem that did not make the operation fail (a cache that could not be used or
    /// updated): a warning, not kept as ``lastError``.
    package func note(_ message: String, operation: String) {
        logger.warning("\(message)", metadata: ["operation": "\(operation)", "store": "\(store)"])
    }

    /// Decodes one record; a record that cannot be read is logged, counted (once, by `record`,
    /// however often it is read) and left out (and left where it is).
    package func readable<R>(_ operation: String, _ record: @autoclosure () -> String, _ body: () throws -> R) -> R? {
        do {
            return try body()
        } catch {
            let name = record()
            state.withLock {
                $0.last = error
                if $0.unreadable.insert(name).inserted, $0.described.count < Self.describedLimit {
                    $0.described.append("\(name): \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
                }
            }
            logger.error("\(operation): a stored record cannot be read and is left out",
                         metadata: ["record": "\(name)", "error": "\(error)", "store": "\(store)"])
            return nil
        }
    }
}
