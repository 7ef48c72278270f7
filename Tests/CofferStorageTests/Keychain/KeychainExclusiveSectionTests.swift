import CofferStorage
import CofferStorageTesting
import Foundation
import TestSupport
import Testing

/// The keyring backend's exclusive section, on the real gnome-keyring of this run.
@Suite("KeychainStorage's exclusive section", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct KeychainExclusiveSectionTests {
    @Test("eight holders of one keyring item, no addition lost")
    func eightHolders() async throws {
        let account = TestKeyring.uniqueAccount()
        try await ExclusiveSectionCheck(makeStorage: {
            KeychainStorage<Int>(account: account, service: "org.coffer.tests", cacheStrategy: .cache)
        }).run()
    }
}
