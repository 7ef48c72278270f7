@testable import CofferStorage
import Foundation
import Testing

/// `COFFER_KEYRING_TIMEOUT`: the timeout of keyring calls that name none.
@Suite("The keyring timeout from the environment")
struct KeyringTimeoutSettingTests {
    @Test("whole seconds from 1 to 3600 are taken; anything else leaves the 10 s default")
    func parsing() {
        #expect(SecretService.timeout(fromEnvironment: "120") == .seconds(120))
        #expect(SecretService.timeout(fromEnvironment: "1") == .seconds(1))
        #expect(SecretService.timeout(fromEnvironment: "3600") == .seconds(3600))
        for ignored in [nil, "", "0", "-5", "3601", "1.5", "ten", " 30", "30s"] {
            #expect(SecretService.timeout(fromEnvironment: ignored) == .seconds(10), "\(ignored ?? "nil")")
        }
    }

    @Test("a storage made without a timeout takes the environment's")
    func defaults() {
        let expected = SecretService.timeout(fromEnvironment: ProcessInfo.processInfo.environment["COFFER_KEYRING_TIMEOUT"])
        #expect(SecretService.defaultTimeout == expected)
        #expect(SecretService().timeout == expected)
    }
}
