@testable import CofferStorage
import Foundation
import Testing

/// `COFFER_KEYRING_TIMEOUT` and `COFFER_DATABASE_TIMEOUT` (checked in CofferPostgresTests): the
/// timeouts of keyring calls and database operations that name none.
@Suite("Timeouts from the environment")
struct KeyringTimeoutSettingTests {
    @Test("whole seconds from 1 to 3600 are taken; anything else leaves the 10 s default")
    func parsing() {
        #expect(EnvironmentTimeout.parse("120") == .seconds(120))
        #expect(EnvironmentTimeout.parse("1") == .seconds(1))
        #expect(EnvironmentTimeout.parse("3600") == .seconds(3600))
        for ignored in [nil, "", "0", "-5", "3601", "1.5", "ten", " 30", "30s"] {
            #expect(EnvironmentTimeout.parse(ignored) == .seconds(10), "\(ignored ?? "nil")")
        }
    }

    @Test("a storage made without a timeout takes the environment's")
    func defaults() {
        let expected = EnvironmentTimeout.parse(ProcessInfo.processInfo.environment["COFFER_KEYRING_TIMEOUT"])
        #expect(SecretService.defaultTimeout == expected)
        #expect(SecretService().timeout == expected)
    }
}
