import CofferAuthenticator
import CofferMFACommons
import CofferOath
import CofferStorageTesting
import CofferAuthenticatorTesting
import Foundation
import Logging
import Synchronization
import Testing

/// A storage written outside the module, with only the five protocol methods (no atomic
/// counter): what an app's own storage looks like.
final class PlainOathStorage: OathStorage {
    let inner = MemoryOathStorage()
    func storeOathCredential(_ credential: OathCredential) async throws {
        await Task.yield()  // widen the window between a read and a write
        try await inner.storeOathCredential(credential)
    }
    func retrieveOathCredential(credentialId: String) async throws -> OathCredential? { try await inner.retrieveOathCredential(credentialId: credentialId) }
    func getAllOathCredentials() async throws -> [OathCredential] { try await inner.getAllOathCredentials() }
    func removeOathCredential(credentialId: String) async throws -> Bool { try await inner.removeOathCredential(credentialId: credentialId) }
    func clearOathCredentials() async throws { try await inner.clearOathCredentials() }
}

/// A policy a test turns on and off.
struct SwitchPolicy: MfaPolicy {
    let name = "switch"
    let compliant: @Sendable () -> Bool
    func evaluate(data: [String: Any]?) async throws -> Bool { compliant() }
}

/// A memory storage on which "another process" issues `codes` HOTP codes just after each
/// listing (a fault injected between the client's listing and its storing of a lock).
struct BusyOathStorage: OathCounterStorage {
    let storage = MemoryOathStorage()
    let codes: Int

    func storeOathCredential(_ credential: OathCredential) async throws { try await storage.storeOathCredential(credential) }
    func retrieveOathCredential(credentialId: String) async throws -> OathCredential? { try await storage.retrieveOathCredential(credentialId: credentialId) }
    func getAllOathCredentials() async throws -> [OathCredential] {
        let listed = try await storage.getAllOathCredentials()
        for credential in listed where credential.oathType == .hotp {
            for _ in 0..<codes { _ = try await storage.advanceOathCounter(credentialId: credential.id) { _ in } }
        }
        return listed
    }
    func removeOathCredential(credentialId: String) async throws -> Bool { try await storage.removeOathCredential(credentialId: credentialId) }
    func clearOathCredentials() async throws { try await storage.clearOathCredentials() }
    func updateOathCredential(credentialId: String, _ change: @Sendable (OathCredential) throws -> OathCredential) async throws -> OathCredential? {
        try await storage.updateOathCredential(credentialId: credentialId, change)
    }
}

@Suite("Ping's OathClient on Coffer's storages")
struct OathClientTests {
    /// RFC 4226's key, "12345678901234567890", in base32.
    static let rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    static let rfcCodes = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]

    @Test("the spec's configuration block compiles unqualified with CofferAuthenticator and CofferOath both imported")
    func specSnippet() async throws {
        let customLogger = Logging.Logger(label: "custom")
        let config = OathConfiguration.build { config in
            config.storage = OathKeychainStorage()
            config.enableCredentialCache = false
            config.logger = customLogger
        }
        #expect(config.storage is OathKeychainStorage && !config.enableCredentialCache)
        let legacy = AuthenticatorConfiguration.build { $0.storage = MemoryStorageClient() }
        #expect(legacy.storage is MemoryStorageClient)
    }

    @Test("HOTP: RFC 4226's codes in order, each counter stored before its code is returned")
    func hotpVectors() async throws {
        let storage = MemoryOathStorage()
        let client = try await OathClient.createClient { $0.storage = storage }
        let credential = try await client.addCredentialFromUri("otpauth://hotp/RFC:4226?secret=\(Self.rfcSecret)&issuer=RFC")
        for (index, expected) in Self.rfcCodes.enumerated() {
            let info = try await client.generateCodeWithValidity(credential.id)
            #expect(info.code == expected && info.counter == index + 1 && info.timeRemaining == -1 && info.totalPeriod == 0)
            #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.counter == index + 1)
        }
        let info = try OathCodeInfo.fromJson(try await client.generateCodeWithValidity(credential.id).toJson())
        #expect(info.counter == 11)
    }

    @Test("TOTP: the engine's code for now, time remaining within the period, progress from it")
    func totp() async throws {
        let client = try await OathClient.createClient { $0.storage = MemoryOathStorage() }
        let credential = try await client.addCredentialFromUri("otpauth://totp/RFC:6238?secret=\(Self.rfcSecret)&period=30&digits=8&algorithm=SHA1")
        let before = Date()
        let info = try await client.generateCodeWithValidity(credential.id)
        let expected = try [before, Date()].map { try OathGenerator.totp(secret: Data("12345678901234567890".utf8), at: $0, digits: 8).code }
        #expect(expected.contains(info.code))
        #expect((1...30).contains(info.timeRemaining) && info.counter == -1 && info.totalPeriod == 30)
        #expect(abs(info.progress - (1 - Double(info.timeRemaining) / 30)) < 1e-9)
    }

    @Test("two requests never get one HOTP code: 4 tasks × 50 on Coffer's storage and on an app's own")
    func concurrentHotp() async throws {
        for storage in [MemoryOathStorage(), PlainOathStorage()] as [any OathStorage] {
            let client = try await OathClient.createClient { $0.storage = storage }
            let credential = try await client.addCredentialFromUri("otpauth://hotp/Race:alice?secret=\(Self.rfcSecret)&digits=8")
            let counters = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<4 {
                    group.addTask { var used: [Int] = []; for _ in 0..<50 { used.append(try await client.generateCodeWithValidity(credential.id).counter) }; return used }
                }
                return try await group.reduce(into: [Int]()) { $0 += $1 }
            }
            #expect(Set(counters).count == 200, "\(type(of: storage)): \(Set(counters).count) distinct of 200")
            #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.counter == 200)
        }
    }

    @Test("policies: a failing one refuses the URI; later ones lock and unlock, and a locked credential makes no code")
    func policies() async throws {
        let compliant = Mutex(true)
        let storage = MemoryOathStorage()
        let client = try await OathClient.createClient { config in
            config.storage = storage
            config.policyEvaluator = MfaPolicyEvaluator.create { $0.policies = [SwitchPolicy { compliant.withLock { $0 } }] }
        }
        let policies = Data(#"{"switch":{}}"#.utf8).base64EncodedString()
        compliant.withLock { $0 = false }
        await #expect(throws: OathError.self) { try await client.addCredentialFromUri("otpauth://totp/P:a?secret=\(Self.rfcSecret)&policies=\(policies)") }
        #expect(try await storage.getAllOathCredentials().isEmpty, "nothing stored")

        compliant.withLock { $0 = true }
        let credential = try await client.addCredentialFromUri("otpauth://totp/P:a?secret=\(Self.rfcSecret)&policies=\(policies)")
        #expect(credential.policies == #"{"switch":{}}"# && !credential.isLocked)
        compliant.withLock { $0 = false }
        let listed = try await client.getCredentials()
        #expect(listed.first?.isLocked == true && listed.first?.lockingPolicy == "switch")
        #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.isLocked == true, "the lock is persisted")
        do {
            _ = try await client.generateCode(credential.id)
            Issue.record("a locked credential made a code")
        } catch OathError.credentialLocked(let id) {
            #expect(id == credential.id)
        }
        compliant.withLock { $0 = true }
        #expect(try await client.getCredentials().first?.isLocked == false)
        #expect(try await client.generateCode(credential.id).count == 6)

        // Linux has no biometrics an app can use: a credential that requires them is refused.
        let strict = try await OathClient.createClient { $0.storage = MemoryOathStorage() }
        let biometric = Data(#"{"biometricAvailable":{}}"#.utf8).base64EncodedString()
        await #expect(throws: OathError.self) { try await strict.addCredentialFromUri("otpauth://totp/B:a?secret=\(Self.rfcSecret)&policies=\(biometric)") }
    }

    @Test("a policy's lock stored after a listing never moves back a counter another process moved meanwhile")
    func lockKeepsCounter() async throws {
        let compliant = Mutex(true)
        let storage = BusyOathStorage(codes: 3)
        let client = try await OathClient.createClient { config in
            config.storage = storage
            config.policyEvaluator = MfaPolicyEvaluator.create { $0.policies = [SwitchPolicy { compliant.withLock { $0 } }] }
            config.enableCredentialCache = false
        }
        let policies = Data(#"{"switch":{}}"#.utf8).base64EncodedString()
        let credential = try await client.addCredentialFromUri("otpauth://hotp/P:a?secret=\(Self.rfcSecret)&policies=\(policies)")
        compliant.withLock { $0 = false }
        _ = try await client.getCredentials()  // lists at counter 0; 3 codes are issued elsewhere; the lock is stored
        let stored = try #require(try await storage.retrieveOathCredential(credentialId: credential.id))
        #expect(stored.isLocked && stored.counter == 3, "locked at counter \(stored.counter), not moved back to 0")
    }

    @Test("the cache serves reads until close(); delete answers false for a missing id; validation refuses bad values")
    func cacheAndValidation() async throws {
        let storage = MemoryOathStorage()
        let client = try await OathClient.createClient { config in
            config.storage = storage
            config.enableCredentialCache = true
        }
        let credential = try await client.addCredentialFromUri("otpauth://totp/C:a?secret=\(Self.rfcSecret)")
        _ = try await storage.removeOathCredential(credentialId: credential.id)
        #expect(try await client.getCredential(credential.id) != nil, "served from the cache")
        try await client.close()
        #expect(try await client.getCredential(credential.id) == nil, "close() empties the cache")
        #expect(try await client.deleteCredential("missing") == false)
        await #expect(throws: OathError.self) {
            try await client.saveCredential(OathCredential(issuer: "", accountName: "a", oathType: .totp, secretKey: Self.rfcSecret))
        }
        await #expect(throws: OathError.self) {
            try await client.saveCredential(OathCredential(issuer: "I", accountName: "a", oathType: .totp, digits: 9, secretKey: Self.rfcSecret))
        }
        await #expect(throws: OathError.self) { try await client.generateCode("missing") }
    }

    @Test("MemoryOathStorage conforms")
    func memoryConforms() async throws {
        try await OathStorageConformance(makeStorage: { MemoryOathStorage() }).run()
    }
}
