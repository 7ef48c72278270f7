import CofferMFACommons
import CofferOath
import CofferStorage
import CofferStorageTesting
import CofferAuthenticatorTesting
import Foundation
import TestSupport
import Testing

@Suite("OathKeychainStorage on a real gnome-keyring", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct OathKeychainStorageTests {
    static func service() -> String { "org.coffer.tests.oath.\(UUID().uuidString.prefix(8))" }
    static let secret = "JBSWY3DPEHPK3PXP"

    @Test("conforms (a storage per check, each under a service of its own)")
    func conforms() async throws {
        // A minute per keyring call: the suite shares one gnome-keyring with every other test.
        try await OathStorageConformance(makeStorage: { OathKeychainStorage(service: Self.service(), timeout: .seconds(60)) }).run()
    }

    @Test("Ping's layout: metadata JSON without the secret under the service, the sealed secret under service.secrets")
    func layout() async throws {
        let service = Self.service()
        let storage = OathKeychainStorage(service: service)
        let credential = OathCredential(id: "layout", issuer: "Example", accountName: "alice", oathType: .totp, secretKey: Self.secret)
        try await storage.storeOathCredential(credential)
        let keyring = SecretService()
        let metadata = try await keyring.search(["service": service, "account": "layout"])
        let secret = try await keyring.search(["service": service + ".secrets", "account": "layout"])
        #expect(metadata.count == 1 && secret.count == 1)
        let json = String(decoding: metadata.first?.secret ?? Data(), as: UTF8.self)
        #expect(json.contains("\"issuer\":\"Example\"") && !json.contains(Self.secret))
        #expect(!(secret.first?.secret.map { String(decoding: $0, as: UTF8.self).contains(Self.secret) } ?? true), "the secret is sealed")
        try await storage.clearOathCredentials()
    }

    @Test("an item moved onto another credential is refused as corrupted, and lists skip it")
    func swappedItems() async throws {
        let service = Self.service()
        let storage = OathKeychainStorage(service: service)
        for id in ["a", "b"] {
            try await storage.storeOathCredential(OathCredential(id: id, issuer: "Example", accountName: id, oathType: .hotp, secretKey: Self.secret))
        }
        let keyring = SecretService()
        let secretOfB = try await keyring.search(["service": service + ".secrets", "account": "b"])[0]
        try await keyring.store(secretOfB.secret!, attributes: secretOfB.attributes.merging(["account": "a"]) { $1 },
                                label: "moved", contentType: "application/octet-stream")
        do {
            _ = try await storage.retrieveOathCredential(credentialId: "a")
            Issue.record("a secret moved from another credential was accepted")
        } catch let error as OathStorageError {
            guard case .storageCorrupted = error else { Issue.record("\(error)"); return }
        }
        #expect(try await storage.getAllOathCredentials().map(\.id) == ["b"])

        let metadataOfB = try await keyring.search(["service": service, "account": "b"])[0]
        try await keyring.store(metadataOfB.secret!, attributes: metadataOfB.attributes.merging(["account": "a"]) { $1 },
                                label: "moved", contentType: "application/json")
        do {
            _ = try await storage.retrieveOathCredential(credentialId: "a")
            Issue.record("metadata moved from another credential was accepted")
        } catch let error as OathStorageError {
            guard case .storageCorrupted = error else { Issue.record("\(error)"); return }
        }
        try await storage.clearOathCredentials()
    }

    @Test("biometric presets are refused on every call, not silently downgraded; access groups see only their own items")
    func securityOptions() async throws {
        let service = Self.service()
        let biometric = OathKeychainStorage(service: service, securityOptions: .biometric)
        do {
            try await biometric.storeOathCredential(OathCredential(issuer: "E", accountName: "a", oathType: .totp, secretKey: Self.secret))
            Issue.record("a biometric preset stored a credential")
        } catch let error as OathStorageError {
            guard case .accessDenied = error else { Issue.record("\(error)"); return }
        }
        let teamA = OathKeychainStorage(service: service, securityOptions: .shared(accessGroup: "team-a"))
        let teamB = OathKeychainStorage(service: service, accessGroup: "team-b")
        try await teamA.storeOathCredential(OathCredential(id: "shared", issuer: "E", accountName: "a", oathType: .totp, secretKey: Self.secret))
        #expect(try await teamB.getAllOathCredentials().isEmpty)
        #expect(try await teamB.retrieveOathCredential(credentialId: "shared") == nil)
        #expect(try await teamA.getAllOathCredentials().count == 1)
        #expect(try await OathKeychainStorage(service: service).getAllOathCredentials().isEmpty, "no group sees no group's items")
        try await teamA.clearOathCredentials()
    }

    @Test("4 processes × 50 HOTP codes of one credential on the keyring: 200 distinct counters, the counter 200 on")
    func fourProcesses() async throws {
        let service = Self.service()
        let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
        let client = try await OathClient.createClient { $0.storage = storage }
        let credential = try await client.addCredentialFromUri("otpauth://hotp/Race:alice?secret=\(OathClientTests.rfcSecret)")
        let run = try await CofferProcess.stressAtOnce(["oath-hotp-keychain", service, credential.id, "50"])
        #expect(run.allSucceeded, "\(run.failures)")
        #expect(run.numbers.count == 200 && Set(run.numbers).count == 200, "\(Set(run.numbers).count) distinct of \(run.numbers.count)")
        #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.counter == 200)
        try await storage.clearOathCredentials()
    }

    @Test("the client on the keyring: RFC 4226 codes, the counter stored first, 4 tasks × 25 codes distinct")
    func client() async throws {
        let storage = OathKeychainStorage(service: Self.service(), timeout: .seconds(60))
        let client = try await OathClient.createClient { $0.storage = storage }
        let credential = try await client.addCredentialFromUri("otpauth://hotp/RFC:4226?secret=\(OathClientTests.rfcSecret)")
        #expect(try await client.generateCode(credential.id) == "755224")
        #expect(try await client.generateCode(credential.id) == "287082")
        #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.counter == 2)
        let counters = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<4 {
                group.addTask { var used: [Int] = []; for _ in 0..<25 { used.append(try await client.generateCodeWithValidity(credential.id).counter) }; return used }
            }
            return try await group.reduce(into: [Int]()) { $0 += $1 }
        }
        #expect(Set(counters).count == 100)
        #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.counter == 102)
        try await storage.clearOathCredentials()
    }

    @Test("the counter memory: removed and re-added through another storage object, the fourth code comes next; the record is sealed")
    func counterMemory() async throws {
        let service = Self.service()
        let code = try await OathCounterMemoryTests.removeAndReadd(first: OathKeychainStorage(service: service, timeout: .seconds(60)),
                                                                   reopened: OathKeychainStorage(service: service, timeout: .seconds(60)))
        #expect(code == OathCounterMemoryTests.codes[3])
        let items = try await SecretService().search(["service": service + ".counters"])
        #expect(items.count == 1)
        #expect(items.first?.secret.map { (try? JSONDecoder().decode([String: UInt64].self, from: $0)) == nil } == true, "sealed, not the map")
        let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
        try await storage.clearOathCredentials()
        try await SecretService().clear(["service": service + ".counters"])
        #expect(try await storage.rememberedCounters().isEmpty)
    }
}
