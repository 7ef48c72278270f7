@testable import CofferPostgres
import Foundation
import TestSupport
import Testing

/// A PostgreSQL error prints, debug-prints and dumps its message only; what the driver said
/// (the server's message, the statement) stays in `underlying` for code that asks.
@Suite("PostgresStorageError")
struct PostgresStorageErrorTests {
    struct DriverError: Error, CustomStringConvertible, CustomDebugStringConvertible {
        var description: String { "statement: INSERT ... VALUES ('SECRETSECRET')" }
        var debugDescription: String { description }
    }

    @Test("description, debugDescription and dump show the message, code and SQLSTATE, not the underlying error")
    func rendering() {
        let error = PostgresStorageError(.server, "The server refused the write.", sqlState: "23505", underlying: DriverError())
        for text in renderings(of: error) + [error.localizedDescription] {
            #expect(!text.contains("SECRETSECRET") && text.contains("The server refused the write."), "\(text)")
        }
        #expect(dumped(error).contains("23505") && dumped(error).contains("server"))
        #expect(error.underlying is DriverError, "kept for code that asks")
    }
}

/// A server that refuses the URL's user or database says so when the database is migrated (as
/// every instance and the tool do at start), instead of the pool retrying until the deadline.
@Suite("A refused connection", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct RefusedConnectionTests {
    @Test("a role or database the server does not have is .invalidConfiguration with its SQLSTATE, not .unavailable", arguments: [
        ("nosuchrole@/postgres?", "nosuchrole", "28000"),
        ("postgres@/nosuchdatabase?", "nosuchdatabase", "3D000"),
    ])
    func refused(replacement: String, named: String, state: String) async throws {
        let admin = try #require(TestPostgres.adminURL)
        let url = admin.replacingOccurrences(of: "postgres@/postgres?", with: replacement)
        try #require(url != admin)
        // A deadline far away: an answer that waited for it would be .unavailable.
        let database = try TestPostgres.database(url) { $0.operationTimeout = .seconds(120) }
        await #expect { try await TestPostgres.running(database, migrate: false) { try await $0.migrate() } } throws: { error in
            guard let error = error as? PostgresStorageError else { return false }
            return error.code == .invalidConfiguration && error.sqlState == state && error.message.contains(named)
        }
    }
}
