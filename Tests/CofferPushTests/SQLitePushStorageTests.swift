import CofferPush
import CofferStorage
import CofferStorageTesting
import CofferAuthenticatorTesting
import Foundation
import GRDB
import Synchronization
import TestSupport
import Testing

@Suite("SQLitePushStorage on real SQLite files")
struct SQLitePushStorageTests {
    static let secret = "b3VyIHNoYXJlZCBzZWNyZXQgb2YgMzIgYnl0ZXMhIQ=="

    func storage(_ directory: TemporaryDirectory, name: String = "push.sqlite") throws -> SQLitePushStorage {
        try SQLitePushStorage(path: directory.url.appendingPathComponent(name).path,
                              encryptor: AESGCMEncryptor(keyAlias: "push", keyStore: FileKeyStore(directory: directory.url.appendingPathComponent("keys"))))
    }

    @Test("conforms, cascade included (a file per check)")
    func conforms() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let files = Mutex(0)
        try await PushStorageConformance(makeStorage: {
            try storage(directory, name: "push-\(files.withLock { $0 += 1; return $0 }).sqlite")
        }).run()
    }

    @Test("the secret, challenge and token are sealed; a secret moved to another row or an endpoint redirected does not open")
    func sealedAndBound() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = try storage(directory)
        for id in ["a", "b"] {
            try await storage.storePushCredential(PushCredential(id: id, issuer: "I", accountName: id, serverEndpoint: "https://am.example.com/push",
                                                                 sharedSecret: Self.secret))
        }
        try await storage.storePushNotification(PushNotification(id: "n", credentialId: "a", ttl: 60, messageId: "m",
                                                                 challenge: "Y2hhbGxlbmdlLXNlY3JldA==", pushType: .default))
        try await storage.storePushDeviceToken(PushDeviceToken(token: "device-token-value"))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: storage.path)) + ((try? Data(contentsOf: URL(fileURLWithPath: storage.path + "-wal"))) ?? Data())
        for plain in [Self.secret, "Y2hhbGxlbmdlLXNlY3JldA==", "device-token-value"] {
            #expect(bytes.range(of: Data(plain.utf8)) == nil, "\(plain) is in the file in the clear")
        }
        #expect(try await storage.getCurrentPushDeviceToken()?.token == "device-token-value")
        #expect(try await storage.retrievePushNotification(notificationId: "n")?.challenge == "Y2hhbGxlbmdlLXNlY3JldA==")

        let raw = try DatabaseQueue(path: storage.path)
        try await raw.write { try $0.execute(sql: "UPDATE mfa_push_credentials SET server_endpoint = 'https://evil.example.com/push' WHERE id = 'a'") }
        await #expect(throws: PushStorageError.self) { try await storage.retrievePushCredential(credentialId: "a") }
        try await raw.write { try $0.execute(sql: "UPDATE mfa_push_credentials SET server_endpoint = 'https://am.example.com/push', shared_secret = (SELECT shared_secret FROM mfa_push_credentials WHERE id = 'b') WHERE id = 'a'") }
        await #expect(throws: PushStorageError.self) { try await storage.retrievePushCredential(credentialId: "a") }
        #expect(try await storage.getAllPushCredentials().map(\.id) == ["b"], "a listing skips the damaged row")
    }

    @Test("an answered prompt revived by hand, its numbers changed, or a crafted column: refused, never a crash")
    func craftedNotifications() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = try storage(directory)
        try await storage.storePushNotification(PushNotification(id: "n", credentialId: "a", ttl: 600, messageId: "m", challenge: "Y2hhbGxlbmdl",
                                                                 numbersChallenge: "12,34,56", pushType: .challenge, approved: true, pending: false))
        let raw = try DatabaseQueue(path: storage.path)
        for edit in ["pending = 1, approved = 0", "numbers_challenge = '42,42,42'", "ttl = 'long'", "created_at = x'00'"] {
            try await raw.write { try $0.execute(sql: "UPDATE mfa_push_notifications SET \(edit) WHERE id = 'n'") }
            await #expect(throws: PushStorageError.self, "\(edit)") { try await storage.retrievePushNotification(notificationId: "n") }
            #expect(try await storage.getPendingPushNotifications().isEmpty, "\(edit)")
        }
    }
}
