import CofferPostgres
import CofferStorage
import Foundation
import Testing

/// `COFFER_DATABASE_TIMEOUT`: the deadline of database operations whose code names none.
@Suite("The database timeout from the environment")
struct DatabaseTimeoutSettingTests {
    @Test("options made without a timeout take the environment's (the parsing is the keyring's: KeyringTimeoutSettingTests)")
    func defaults() {
        let variable = ProcessInfo.processInfo.environment["COFFER_DATABASE_TIMEOUT"]
        #expect(CofferDatabase.Configuration.Options.defaultOperationTimeout == EnvironmentTimeout.parse(variable))
        #expect(CofferDatabase.Configuration.Options().operationTimeout == EnvironmentTimeout.parse(variable))
        if variable == nil { #expect(CofferDatabase.Configuration.Options().operationTimeout == .seconds(10)) }
    }

    @Test("the test run gives the README's server example, which names no timeout, a minute (scripts/with-postgres)",
          .enabled(if: ProcessInfo.processInfo.environment["COFFER_TEST_DATABASE_URL"] != nil))
    func testRun() {
        #expect(CofferDatabase.Configuration.Options().operationTimeout == .seconds(60))
    }
}
