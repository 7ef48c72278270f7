import CofferMFACommons
import CofferOath
import CofferPush
import Foundation
import TestSupport
import Testing

/// Every one of Apple's `kSecAttrAccessible…` values on a real keyring: honoured where "while
/// the keyring is unlocked, on this machine only" covers it, refused with a typed error where it
/// cannot (an item readable while the keyring is locked), and an unknown value refused too.
@Suite("kSecAttrAccessible values on a real gnome-keyring", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct KeychainAccessibilityTests {
    static let honoured = [kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleWhenUnlocked,
                           kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlock,
                           kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly]

    @Test("Apple's raw values, so a value a Ping app stored or logged reads the same")
    func rawValues() {
        #expect([kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlock,
                 kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly,
                 kSecAttrAccessibleAlways, kSecAttrAccessibleAlwaysThisDeviceOnly] == ["ak", "aku", "ck", "cku", "akpu", "dk", "dku"])
    }

    @Test("each honoured value stores and reads a credential", arguments: honoured)
    func honouredValue(_ value: CFString) async throws {
        let storage = OathKeychainStorage(service: "org.coffer.tests.access.\(UUID().uuidString.prefix(8))", accessibility: value)
        let credential = OathCredential(issuer: "Example", accountName: "alice", oathType: .totp, secretKey: "JBSWY3DPEHPK3PXP")
        try await storage.storeOathCredential(credential)
        #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.secret == "JBSWY3DPEHPK3PXP")
        try await storage.clearOathCredentials()
    }

    @Test("Always, AlwaysThisDeviceOnly and an unknown value fail every call with a typed error, storing nothing",
          arguments: [kSecAttrAccessibleAlways, kSecAttrAccessibleAlwaysThisDeviceOnly, "whenever"])
    func refusedValue(_ value: CFString) async throws {
        #expect(throws: KeychainAccessibilityError.self) { try KeychainAccessibility.check(value) }
        let service = "org.coffer.tests.access.\(UUID().uuidString.prefix(8))"
        let oath = OathKeychainStorage(service: service, accessibility: value)
        let credential = OathCredential(issuer: "Example", accountName: "alice", oathType: .totp, secretKey: "JBSWY3DPEHPK3PXP")
        await #expect(throws: OathStorageError.self) { try await oath.storeOathCredential(credential) }
        #expect(try await OathKeychainStorage(service: service).getAllOathCredentials().isEmpty, "nothing was stored")

        let push = PushKeychainStorage(credentialService: service + ".push", accessibility: value)
        let error = await #expect(throws: PushStorageError.self) { _ = try await push.getAllPushCredentials() }
        guard case .storageFailure(_, let cause)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(cause is KeychainAccessibilityError)
    }
}
