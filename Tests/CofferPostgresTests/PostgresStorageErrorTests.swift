@testable import CofferPostgres
import Foundation
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
        var dumped = ""
        dump(error, to: &dumped)
        for text in ["\(error)", String(reflecting: error), error.localizedDescription, dumped] {
            #expect(!text.contains("SECRETSECRET") && text.contains("The server refused the write."), "\(text)")
        }
        #expect(dumped.contains("23505") && dumped.contains("server"))
        #expect(error.underlying is DriverError, "kept for code that asks")
    }
}
