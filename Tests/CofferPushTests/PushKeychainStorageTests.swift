import CofferPush
import CofferStorage
import CofferStorageTesting
import CofferAuthenticatorTesting
import Foundation
import TestSupport
import Testing

@Suite("PushKeychainStorage on a real gnome-keyring", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct PushKeychainStorageTests {
    static func storage() -> PushKeychainStorage {
        let prefix = "org.coffer.tests.push.\(UUID().uuidString.prefix(8))"
        return PushKeychainStorage(credentialService: prefix + ".credentials", notificationService: prefix + ".notifications",
                                   tokenService: prefix + ".tokens", timeout: .seconds(60))  // the suite shares one keyring
    }

    @Test("conforms, cascade included")
    func conforms() async throws {
        try await PushStorageConformance(makeStorage: { Self.storage() }).run()
    }

    @Test("values are sealed (no secret or challenge in the keyring in the clear) and a value moved to another item is refused")
    func sealedAndBound() async throws {
        let storage = Self.storage()
        let secret = "b3VyIHNoYXJlZCBzZWNyZXQgb2YgMzIgYnl0ZXMhIQ=="
        for id in ["a", "b"] {
            try await storage.storePushCredential(PushCredential(id: id, issuer: "I", accountName: id, serverEndpoint: "https://x", sharedSecret: secret))
        }
        let keyring = SecretService()
        let items = try await keyring.search(["service": storage.credentialService])
        #expect(items.count == 2 && items.allSatisfy { !String(decoding: $0.secret ?? Data(), as: UTF8.self).contains(secret) })
        let itemOfB = items.first { $0.attributes["account"] == "b" }!
        try await keyring.store(itemOfB.secret!, attributes: itemOfB.attributes.merging(["account": "a"]) { $1 }, label: "moved",
                                contentType: "application/octet-stream")
        await #expect(throws: PushStorageError.self) { try await storage.retrievePushCredential(credentialId: "a") }
        #expect(try await storage.getAllPushCredentials().map(\.id) == ["b"])
        try await storage.clearPushCredentials()
    }
}
