import CofferMFACommons
import CofferPush
import CofferStorageTesting
import CofferAuthenticatorTesting
import Foundation
import Synchronization
import Testing

/// The app's network step, as a test provides it: records what would have been sent and
/// answers as told. (No PingAM server is reachable from the tests.)
final class RecordingNetwork: PingAMNetwork {
    let sent = Mutex<[String]>([])
    let accept: Bool
    init(accept: Bool = true) { self.accept = accept }
    func register(credential: PushCredential, params: [String: Any]) async throws -> Bool {
        sent.withLock { $0.append("register \(credential.id) \(params["deviceId"] as? String ?? "") \(params["messageId"] as? String ?? "")") }
        return accept
    }
    func respond(credential: PushCredential, notification: PushNotification, approved: Bool, params: [String: Any]) async throws -> Bool {
        sent.withLock { $0.append("\(approved ? "approve" : "deny") \(notification.id)") }
        return accept
    }
    func updateDeviceToken(credential: PushCredential, deviceToken: String, params: [String: Any]) async throws -> Bool {
        sent.withLock { $0.append("token \(credential.id) \(deviceToken)") }
        return accept
    }
}

/// A PingAM message: a JWT whose claims name the credential and carry the challenge.
func pingAMMessage(credentialId: String, claims extra: [String: Any] = [:]) -> String {
    let claims = ["u": credentialId, "c": "Y2hhbGxlbmdl", "t": 120, "m": "Sign in to Example?", "k": "default"].merging(extra) { $1 }
    let payload = try! JSONSerialization.data(withJSONObject: claims).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    return "eyJhbGciOiJIUzI1NiJ9.\(payload).c2lnbmF0dXJlLXBhcnQ"
}

@Suite("Ping's PushClient on Coffer's storages")
struct PushClientTests {
    static let uri = "pushauth://push/Example:alice?a=aHR0cHM6Ly9hbS5leGFtcGxlLmNvbS9wdXNoP19hY3Rpb249YXV0aGVudGljYXRl"
        + "&r=aHR0cHM6Ly9hbS5leGFtcGxlLmNvbS9wdXNoP19hY3Rpb249cmVnaXN0ZXI&s=b3VyIHNoYXJlZCBzZWNyZXQgb2YgMzIgYnl0ZXMhIQ"
        + "&c=Y2hhbGxlbmdl&l=YW1sYj0x&m=REGISTER-1&issuer=RXhhbXBsZQ"

    func makeClient(_ storage: any PushStorage, network: RecordingNetwork = RecordingNetwork(),
                cleanup: NotificationCleanupConfig = .default()) async throws -> PushClient {
        try await PushClient.createClient { config in
            config.storage = storage
            config.customPushHandlers = ["pingam": PingAMPushHandler(network: network)]
            config.notificationCleanupConfig = cleanup
        }
    }

    @Test("a URI registers through the app's network step once a device token is set, and is stored with Ping's fields")
    func register() async throws {
        let storage = MemoryPushStorage()
        let network = RecordingNetwork()
        let client = try await makeClient(storage, network: network)
        await #expect(throws: PushError.self) { try await client.addCredentialFromUri(Self.uri) }
        #expect(try await client.setDeviceToken(" token-1 ") == true)
        let credential = try await client.addCredentialFromUri(Self.uri)
        #expect(credential.issuer == "Example" && credential.accountName == "alice" && credential.serverEndpoint == "https://am.example.com/push")
        #expect(credential.secret == "b3VyIHNoYXJlZCBzZWNyZXQgb2YgMzIgYnl0ZXMhIQ==" && credential.resourceId == "" && credential.platform == .pingAM)
        #expect(network.sent.withLock { $0 } == ["register \(credential.id) token-1 REGISTER-1"])
        #expect(try await storage.retrievePushCredential(credentialId: credential.id) != nil)

        let refusing = try await makeClient(MemoryPushStorage(), network: RecordingNetwork(accept: false))
        _ = try await refusing.setDeviceToken("t")
        await #expect(throws: PushError.self) { try await refusing.addCredentialFromUri(Self.uri) }
        let unreachable = try await PushClient.createClient { $0.storage = MemoryPushStorage() }
        _ = try await unreachable.setDeviceToken("t")
        do {
            _ = try await unreachable.addCredentialFromUri(Self.uri)
            Issue.record("registered without a network step")
        } catch PushError.networkFailure(let message, _) {
            #expect(message.contains("no network step"))
        }
    }

    @Test("notifications: stored once per message id, pending until answered, answered through the network step")
    func notifications() async throws {
        let storage = MemoryPushStorage()
        let network = RecordingNetwork()
        let client = try await makeClient(storage, network: network)
        _ = try await client.setDeviceToken("token")
        let credential = try await client.addCredentialFromUri(Self.uri)
        let payload: [String: Any] = ["messageId": "M-1", "message": pingAMMessage(credentialId: credential.id, claims: ["d": "user-7"])]
        let first = try await client.processNotification(messageData: payload)
        let again = try await client.processNotification(messageData: payload)
        #expect(first?.id == again?.id && first?.messageText == "Sign in to Example?" && first?.challenge == "Y2hhbGxlbmdl")
        #expect(try await client.getAllNotifications().count == 1, "one message, one notification")
        let bare = pingAMMessage(credentialId: credential.id)
        let fromBare = try await client.processNotification(message: bare)
        #expect(fromBare?.messageId == String(bare.split(separator: ".").last!.prefix(8)), "a bare JWT's id is its signature's first 8 characters")
        _ = try await client.processNotification(message: bare)
        #expect(try await client.getAllNotifications().count == 2)
        #expect(try await client.getCredential(credentialId: credential.id)?.userId == "user-7", "the user id is recorded")
        #expect(try await client.processNotification(messageData: ["unrelated": true]) == nil)

        _ = try await storage.removePushNotification(notificationId: fromBare!.id)
        let pending = try await client.getPendingNotifications()
        #expect(pending.map(\.id) == [first?.id])
        #expect(try await client.approveNotification(first!.id))
        #expect(try await client.approveNotification(first!.id) == false, "an answered notification is not answered again")
        #expect(try await client.getPendingNotifications().isEmpty)
        #expect(network.sent.withLock { $0 }.last == "approve \(first!.id)")
        await #expect(throws: PushError.self) { try await client.denyNotification("missing") }
        await #expect(throws: PushError.self) { try await client.approveChallengeNotification(first!.id, challengeResponse: " ") }
    }

    @Test("deleting a credential deletes its notifications (Ping's keeps them); close() cleans up and closes")
    func deleteAndClose() async throws {
        let storage = MemoryPushStorage()
        let client = try await makeClient(storage, cleanup: .countBased(maxNotifications: 2))
        _ = try await client.setDeviceToken("token")
        let credential = try await client.addCredentialFromUri(Self.uri)
        for index in 0..<3 {
            _ = try await client.processNotification(messageData: ["messageId": "M-\(index)", "message": pingAMMessage(credentialId: credential.id)])
        }
        #expect(try await client.cleanupNotifications() >= 0)
        #expect(try await storage.countPushNotifications(credentialId: nil) == 2, "count-based cleanup keeps the newest 2")
        #expect(try await client.deleteCredential(credentialId: credential.id))
        #expect(try await storage.countPushNotifications(credentialId: nil) == 0)
        await client.close()
        await client.close()
        do {
            _ = try await client.getCredentials()
            Issue.record("a closed client answered")
        } catch PushError.notInitialized {}
    }

    @Test("a purge racing new notifications loses none of the new ones")
    func purgeRace() async throws {
        let storage = MemoryPushStorage()
        for index in 0..<200 {
            try await storage.storePushNotification(PushNotification(id: "old-\(index)", credentialId: "c", ttl: 120, messageId: "o\(index)",
                                                                     pushType: .default, createdAt: Date(timeIntervalSinceNow: -1000 - Double(index))))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for _ in 0..<50 { _ = try await storage.purgePushNotificationsByCount(maxCount: 100, credentialId: nil) } }
            group.addTask {
                for index in 0..<100 {
                    try await storage.storePushNotification(PushNotification(id: "new-\(index)", credentialId: "c", ttl: 120, messageId: "n\(index)", pushType: .default))
                }
            }
            try await group.waitForAll()
        }
        let ids = Set(try await storage.getAllPushNotifications().map(\.id))
        #expect((0..<100).allSatisfy { ids.contains("new-\($0)") }, "every new notification is kept")
    }

    @Test("PushUriParser: Ping's fields and errors; format reads back")
    func uris() async throws {
        let credential = try await PushCredential.fromUri(Self.uri)
        let params = try await PushUriParser.registrationParameters(Self.uri)
        #expect(params == ["messageId": "REGISTER-1", "amlbCookie": "amlb=1", "challenge": "Y2hhbGxlbmdl"])
        let again = try await PushCredential.fromUri(try await credential.toUri())
        #expect(again.issuer == credential.issuer && again.serverEndpoint == credential.serverEndpoint && again.secret == credential.secret)
        for broken in ["otpauth://totp/A:b?secret=JBSWY3DPEHPK3PXP", "pushauth://push/A:b?r=x", "", Self.uri + "&s=AAAA",
                       Self.uri.replacingOccurrences(of: "issuer=RXhhbXBsZQ", with: "issuer=Other")] {
            await #expect(throws: PushError.self, "\(broken.prefix(40))") { try await PushCredential.fromUri(broken) }
        }
    }

    @Test("JSON keeps Ping's keys and raw values; description and dump show no secret")
    func json() throws {
        let credential = PushCredential(issuer: "I", accountName: "a", serverEndpoint: "https://x", sharedSecret: "c2VjcmV0LXNlY3JldA==",
                                        additionalData: ["k": 1])
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(credential)) as? [String: Any] ?? [:]
        #expect(object["platform"] as? String == "pingam" && object["sharedSecret"] as? String == "c2VjcmV0LXNlY3JldA==")
        #expect(object["additionalData"] == nil && object["resourceId"] as? String == credential.id)
        var dumped = ""
        dump(credential, to: &dumped)
        #expect(!dumped.contains("c2VjcmV0") && !credential.description.contains("c2VjcmV0"))
        let notification = PushNotification(credentialId: "c", ttl: 1, messageId: "m", numbersChallenge: "12, 34,x,56", pushType: .challenge)
        #expect(notification.getNumbersChallenge() == [12, 34, 56])
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(notification)) as? [String: Any] ?? [:]
        #expect(encoded["pushType"] as? String == "challenge" && encoded["pending"] as? Bool == true)
        #expect(PushDeviceToken(token: "t") == PushDeviceToken(token: "t"))
        #expect(NotificationCleanupConfig(maxStoredNotifications: 0).maxStoredNotifications == 1)
    }

    @Test("MemoryPushStorage conforms")
    func memoryConforms() async throws {
        try await PushStorageConformance(makeStorage: { MemoryPushStorage() }).run()
    }
}
