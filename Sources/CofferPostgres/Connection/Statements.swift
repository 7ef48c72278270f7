import Logging
import PostgresNIO

// How Coffer runs SQL, and why not with postgres-nio's `query` alone.
//
// postgres-nio answers a statement as soon as its result begins: a statement with rows when
// its row description arrives (an error after that goes to the row sequence, where nobody
// may look), and any statement when its CommandComplete arrives. Outside a transaction the
// server commits only after that, at the Sync that follows, so a server killed at that moment
// can send CommandComplete (flushed as it dies) for a write that never committed. Two rules:
// every statement's rows are read to the end, and every write runs in a transaction whose
// COMMIT the server has answered: COMMIT's CommandComplete comes after the commit is on disk.

extension PostgresConnection {
    /// Runs one statement on this connection and reads all its rows, so that an error
    /// anywhere in its result is thrown.
    @discardableResult
    package func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await self.query(query, logger: logger).collect()
    }
}

extension PostgresClient {
    /// Runs one statement outside a transaction and reads all its rows: for reads.
    package func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await self.query(query, logger: logger).collect()
    }

    /// Runs `body` in one transaction; returns once the server has answered the COMMIT, so
    /// what `body` wrote survives a server crash from then on.
    func committed<R: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> R) async throws -> R {
        try await withTransaction(logger: logger) { connection in try await body(connection) }
    }
}

extension CofferDatabase {
    /// A read: one statement, all its rows, under the operation deadline.
    package func read(_ operation: String, _ query: PostgresQuery) async throws -> [PostgresRow] {
        let client = client, logger = logger
        return try await deadline.run(operation) { try await client.rows(query, logger: logger) }
    }

    /// A write: `body` in one transaction, acknowledged once committed, under the deadline.
    package func write<R: Sendable>(_ operation: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        let client = client, logger = logger
        return try await deadline.run(operation) { try await client.committed(logger: logger) { try await body($0) } }
    }

    /// A write of one statement: its rows, acknowledged once committed, under the deadline.
    @discardableResult
    package func write(_ operation: String, _ query: PostgresQuery) async throws -> [PostgresRow] {
        let logger = logger
        return try await write(operation) { try await $0.rows(query, logger: logger) }
    }
}
