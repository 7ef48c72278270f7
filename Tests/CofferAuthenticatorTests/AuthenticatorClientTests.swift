import CofferAuthenticator
import Foundation
import Logging
import CofferStorage
import Synchronization
import TestSupport
import Testing

/// Fault injection: a real MemoryStorageClient whose mechanism writes can be made to fail.
final class FlakyStorageClient: ForwardingStorageClient {
    let failMechanismWrites = Mutex(false)

    @discardableResult override func setMechanism(mechanism: Mechanism) -> Bool {
        failMechanismWrites.withLock { $0 } ? false : super.setMechanism(mechanism: mechanism)
    }
}

@Suite("AuthenticatorClient")
struct AuthenticatorClientTests {
    static let time = Date(timeIntervalSince1970: 1_111_111_111)
    let totpURI = "otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&digits=8&period=30"
    let hotpURI = "otpauth://hotp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=0"

    func client(_ storage: any StorageClient = MemoryStorageClient()) -> AuthenticatorClient {
        AuthenticatorClient(storage: storage, clock: { Self.time })
    }

    @Test("adds from a URI, lists accounts with their mechanisms, and computes the RFC 6238 code")
    func addListAndCode() throws {
        let authenticator = client()
        let entry = try authenticator.addAccount(uri: totpURI)
        #expect(entry.account.issuer == "Example" && entry.mechanisms.count == 1)
        let listed = authenticator.accounts()
        #expect(listed.map(\.account.accountName) == ["alice"])
        let code = try authenticator.code(for: try #require(listed.first?.mechanisms.first))
        #expect(code.code == "14050471", "RFC 6238 appendix B, SHA-1 at T=1111111111")
        #expect(code.validUntil == Date(timeIntervalSince1970: 1_111_111_140))
    }

    @Test("a second mechanism of the same type for an account is refused; another type is added")
    func duplicateMechanism() throws {
        let authenticator = client()
        try authenticator.addAccount(uri: totpURI)
        #expect(throws: AuthenticatorError.self) { try authenticator.addAccount(uri: totpURI) }
        // A check that fails when nothing is thrown (it could not before: issue 31).
        #expect { try authenticator.addAccount(uri: totpURI.replacingOccurrences(of: "digits=8", with: "digits=6")) } throws: { error in
            error.localizedDescription.contains("already has a TOTP mechanism")
        }
        try authenticator.addAccount(uri: hotpURI)
        #expect(Set(authenticator.accounts().first?.mechanisms.map(\.type) ?? []) == [.totp, .hotp])
    }

    @Test("a bad URI is refused naming the parameter, and nothing is stored")
    func badURI() {
        let storage = MemoryStorageClient()
        #expect(throws: AuthenticatorError.self) { try client(storage).addAccount(uri: "otpauth://totp/A:b?secret=JBSW1") }
        #expect(storage.isEmpty())
    }

    @Test("counterFloor raises a HOTP counter before it is stored; one that throws stops the add and stores nothing")
    func counterFloor() throws {
        struct Unknown: Error {}
        let storage = MemoryStorageClient()
        let raising = AuthenticatorClient(storage: storage, counterFloor: { $0.accountName == "bob" ? 9 : 0 })
        try raising.addAccount(uri: "otpauth://hotp/Bank:bob?secret=JBSWY3DPEHPK3PXP&issuer=Bank&counter=2")
        #expect(storage.getAllAccounts().flatMap { storage.getMechanismsForAccount(account: $0) }.map(\.counter) == [9])
        let failing = AuthenticatorClient(storage: storage, counterFloor: { _ in throw Unknown() })
        #expect(throws: AuthenticatorError.self) { try failing.addAccount(uri: "otpauth://hotp/Bank:carol?secret=JBSWY3DPEHPK3PXP&issuer=Bank") }
        #expect(storage.getAllAccounts().count == 1, "neither account nor mechanism was stored")
        try failing.addAccount(uri: "otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail")
        #expect(storage.getAllAccounts().count == 2, "a TOTP mechanism needs no floor")
    }

    @Test("keepCounter sees a HOTP mechanism as it is taken out, before it is; one that throws keeps it stored")
    func keepCounter() throws {
        struct Refused: Error {}
        let storage = MemoryStorageClient()
        let kept = Mutex<[UInt64]>([])
        let keeping = AuthenticatorClient(storage: storage, keepCounter: { mechanism in
            #expect(storage.getMechanismForUUID(uuid: mechanism.mechanismUUID) != nil, "called before the removal")
            kept.withLock { $0.append(mechanism.counter) }
        })
        let entry = try keeping.addAccount(uri: "otpauth://hotp/Bank:bob?secret=JBSWY3DPEHPK3PXP&issuer=Bank&counter=4")
        let mechanism = try #require(entry.mechanisms.first)
        let refusing = AuthenticatorClient(storage: storage, keepCounter: { _ in throw Refused() })
        #expect(throws: AuthenticatorError.self) { try refusing.takeOut(mechanism) }
        #expect(storage.getMechanismForUUID(uuid: mechanism.mechanismUUID) != nil, "nothing was taken out")
        #expect(try keeping.takeOut(mechanism)?.counter == 4)
        #expect(kept.withLock { $0 } == [4])
        #expect(storage.getMechanismForUUID(uuid: mechanism.mechanismUUID) == nil)
    }

    @Test("HOTP: each code advances the stored counter first")
    func hotpAdvances() throws {
        let storage = MemoryStorageClient()
        let authenticator = client(storage)
        let mechanism = try #require(try authenticator.addAccount(uri: hotpURI).mechanisms.first)
        let codes = try (0..<3).map { _ in try authenticator.code(for: mechanism).code }
        #expect(codes == ["755224", "287082", "359152"], "RFC 4226 appendix D")
        #expect(storage.getMechanismForUUID(uuid: mechanism.mechanismUUID)?.counter == 3)
    }

    @Test("HOTP: when the counter cannot be stored, no code is returned and the counter is unchanged")
    func hotpStorageFailure() throws {
        let storage = FlakyStorageClient()
        let authenticator = client(storage)
        let mechanism = try #require(try authenticator.addAccount(uri: hotpURI).mechanisms.first)
        _ = try authenticator.code(for: mechanism)
        storage.failMechanismWrites.withLock { $0 = true }
        #expect(throws: AuthenticatorError.self) { try authenticator.code(for: mechanism) }
        #expect(storage.getMechanismForUUID(uuid: mechanism.mechanismUUID)?.counter == 1)
        storage.failMechanismWrites.withLock { $0 = false }
        #expect(try authenticator.code(for: mechanism).code == "287082", "the code for counter 1 was never handed out before")
    }

    @Test("a locked account gives no codes until unlocked")
    func lockAndUnlock() throws {
        let authenticator = client()
        let entry = try authenticator.addAccount(uri: totpURI)
        try authenticator.lock(entry.account, policy: "deviceTampering")
        #expect(authenticator.accounts().first?.account.lockingPolicy == "deviceTampering")
        do {
            _ = try authenticator.code(for: entry.mechanisms[0])
            Issue.record("a locked account gave a code")
        } catch AuthenticatorError.accountLocked(_, _, let policy) {
            #expect(policy == "deviceTampering")
        }
        try authenticator.unlock(entry.account)
        #expect(try authenticator.code(for: entry.mechanisms[0]).code == "14050471")
    }

    @Test("removing an account removes its mechanisms and notifications from storage, as a fresh client sees")
    func cascadeRemoval() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = MemoryKeyStore()
        func open() throws -> SQLiteStorageClient {
            try SQLiteStorageClient(path: directory.appending("a.sqlite").path, encryptor: AESGCMEncryptor(keyAlias: "k", keyStore: keys))
        }
        let authenticator = client(try open())
        let push = "pushauth://push/Example:alice?r=aHR0cHM6Ly9leGFtcGxlLmNvbS9y&a=aHR0cHM6Ly9leGFtcGxlLmNvbS9h"
            + "&s=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8&c=Y2hhbGxlbmdl&m=reg-1"
        let entry = try authenticator.addAccount(uri: push)
        let storage = try open()
        storage.setNotification(notification: PushNotification(messageId: "n1", mechanismUUID: entry.mechanisms[0].mechanismUUID, challenge: "Y2g="))
        try authenticator.addAccount(uri: "otpauth://totp/Other:bob?secret=JBSWY3DPEHPK3PXP")
        #expect(authenticator.accounts().first { $0.account.accountName == "alice" }?.notifications.count == 1)

        try authenticator.removeAccount(entry.account)
        let fresh = try open()
        #expect(fresh.getAccount(accountIdentifier: entry.account.identifier) == nil)
        #expect(fresh.getMechanismForUUID(uuid: entry.mechanisms[0].mechanismUUID) == nil)
        #expect(fresh.getAllNotifications().isEmpty)
        #expect(fresh.getAllAccounts().map(\.accountName) == ["bob"], "other accounts stay")
        #expect(throws: AuthenticatorError.self) { try authenticator.removeAccount(entry.account) }
    }

    @Test("with the credential cache, the list is rebuilt after changes made through the client")
    func credentialCache() throws {
        let storage = MemoryStorageClient()
        let authenticator = AuthenticatorClient(storage: storage, enableCredentialCache: true)
        try authenticator.addAccount(uri: totpURI)
        #expect(authenticator.accounts().count == 1)
        storage.setAccount(account: Account(issuer: "Behind", accountName: "the back"))
        #expect(authenticator.accounts().count == 1, "served from the cache")
        try authenticator.addAccount(uri: hotpURI.replacingOccurrences(of: "alice", with: "carol"))
        #expect(authenticator.accounts().count == 3, "rebuilt after a change")
    }
}

// MARK: - The spec's snippets

/// The spec's custom StorageClient: a plain class, not Sendable, written only against the
/// protocol's spec requirements.
class CustomStorageClient: StorageClient {
    private var accounts: [String: Account] = [:]
    private var mechanisms: [String: Mechanism] = [:]
    private var notifications: [String: PushNotification] = [:]

    @discardableResult func setAccount(account: Account) -> Bool { accounts[account.identifier] = account; return true }
    @discardableResult func removeAccount(account: Account) -> Bool { accounts.removeValue(forKey: account.identifier) != nil }
    func getAccount(accountIdentifier: String) -> Account? { accounts[accountIdentifier] }
    func getAllAccounts() -> [Account] { Array(accounts.values) }
    @discardableResult func setMechanism(mechanism: Mechanism) -> Bool {
        if accounts[mechanism.accountIdentifier] == nil {
            accounts[mechanism.accountIdentifier] = Account(issuer: mechanism.issuer, accountName: mechanism.accountName)
        }
        mechanisms[mechanism.mechanismUUID] = mechanism
        return true
    }
    @discardableResult func removeMechanism(mechanism: Mechanism) -> Bool { mechanisms.removeValue(forKey: mechanism.mechanismUUID) != nil }
    func getMechanismsForAccount(account: Account) -> [Mechanism] { mechanisms.values.filter { $0.accountIdentifier == account.identifier } }
    func getMechanismForUUID(uuid: String) -> Mechanism? { mechanisms[uuid] }
    @discardableResult func setNotification(notification: PushNotification) -> Bool { notifications[notification.identifier] = notification; return true }
    @discardableResult func removeNotification(notification: PushNotification) -> Bool { notifications.removeValue(forKey: notification.identifier) != nil }
    func getAllNotificationsForMechanism(mechanism: Mechanism) -> [PushNotification] { notifications.values.filter { $0.mechanismUUID == mechanism.mechanismUUID } }
    @discardableResult func isEmpty() -> Bool { accounts.isEmpty && mechanisms.isEmpty && notifications.isEmpty }
}

@Suite("FRAClient", .serialized)
struct FRAClientTests {
    @Test("the spec's registration snippet; the storage cannot change after start")
    func registrationBeforeStart() throws {
        FRAClient.reset()
        defer { FRAClient.reset() }

        // Initiate your custom StorageClient
        let customStorageClient = CustomStorageClient()
        // Register it with your FRAClient
        FRAClient.setStorage(storage: customStorageClient)
        // Initiate the SDK
        FRAClient.start()

        let running = try #require(FRAClient.shared)
        try running.addAccount(uri: "otpauth://totp/Spec:demo?secret=JBSWY3DPEHPK3PXP")
        #expect(customStorageClient.getAllAccounts().map(\.accountName) == ["demo"], "the registered client is used")

        #expect(FRAClient.setStorage(storage: MemoryStorageClient()) == false)
        #expect(throws: AuthenticatorError.self) { try FRAClient.setStorage(MemoryStorageClient()) }
        #expect(FRAClient.start() === running, "starting again returns the running client")
    }

    @Test("AuthenticatorConfiguration.build configures the client")
    func configuration() throws {
        let customLogger = Logger(label: "custom")
        let storage = MemoryStorageClient()
        let config = AuthenticatorConfiguration.build { config in
            config.storage = storage
            config.enableCredentialCache = false
            config.logger = customLogger
        }
        let client = try config.makeClient()
        try client.addAccount(uri: "otpauth://totp/Spec:demo?secret=JBSWY3DPEHPK3PXP")
        #expect(!storage.isEmpty())
        #expect(client.logger.label == "custom")
    }
}
