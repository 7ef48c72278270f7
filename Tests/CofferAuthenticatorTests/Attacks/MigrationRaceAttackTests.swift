import CofferAuthenticator
import CofferStorage
import Foundation
import Logging
import TestSupport
import Testing

/// The fifth round's attack review (helper, finding 2): during `migrate`, the target's copy could
/// issue codes while the source still did, so a shell pinned to the target and one on the source
/// issued the same HOTP code. The target's copy is now locked until the source lets go.
@Suite("Fifth round: no HOTP code twice while a migration runs, from either store")
struct MigrationRaceAttackTests {
    let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    @Test("a code asked of the target and one of the source, just after the target got its copy, are not the same code")
    func bothStoresDuringTheMove() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let source = try SQLiteStorageClient(path: directory.appending("source.sqlite").path,
                                             encryptor: AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore()))
        let real = try SQLiteStorageClient(path: directory.appending("target.sqlite").path,
                                           encryptor: AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore()))
        try AuthenticatorClient(storage: source).addAccount(uri: "otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank&counter=5")
        var issued: [String] = []
        // Two shells, one on each store, each ask for a code right after the copy is written.
        let target = AfterInsert(real) {
            for store in [real as any StorageClient, source] {
                let client = AuthenticatorClient(storage: store)
                if let mechanism = client.accounts().first?.mechanisms.first, let code = try? client.code(for: mechanism) {
                    issued.append(code.code)
                }
            }
        }
        let report = try StorageMigration.move(from: source, to: target)
        #expect(report.mechanisms == 1)
        let moved = AuthenticatorClient(storage: real)
        let entry = try #require(moved.accounts().first)
        #expect(!entry.account.isLocked && entry.account.lockingPolicy == nil, "unlocked once the move is over")
        issued.append(try moved.code(for: entry.mechanisms[0]).code)
        #expect(Set(issued).count == issued.count, "a code issued twice: \(issued)")
        #expect(issued == [try OathGenerator.hotp(secret: Base32.decode(secret), counter: 5),
                           try OathGenerator.hotp(secret: Base32.decode(secret), counter: 6)],
                "the source issued 5 during the move (the target's copy refused), the target 6 after it")
    }

    @Test("a migration cut short after the source let go leaves the copy locked; the next one unlocks it, and code says why meanwhile")
    func interruptedUnlock() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let target = try SQLiteStorageClient(path: directory.appending("target.sqlite").path,
                                             encryptor: AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore()))
        let client = AuthenticatorClient(storage: target)
        let entry = try client.addAccount(uri: "otpauth://totp/Mail:bob?secret=\(secret)&issuer=Mail")
        try client.lock(entry.account, policy: StorageMigration.movingPolicy)
        #expect { _ = try client.code(for: entry.mechanisms[0]) } throws: { ($0 as? LocalizedError)?.errorDescription?.contains("being moved here by a migration") == true }
        _ = try StorageMigration.move(from: MemoryStorageClient(), to: target)
        #expect(try client.code(for: entry.mechanisms[0]).code.count == 6)
        // A lock of the user's own is kept.
        try client.lock(entry.account, policy: "deviceTampering")
        _ = try StorageMigration.move(from: MemoryStorageClient(), to: target)
        #expect(target.getAllAccounts().first?.lockingPolicy == "deviceTampering")
    }

    @Test("2nd review: copies an interrupted migration from one store left locked are not unlocked by a migration from another")
    func otherSourceLeavesCopiesLocked() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let target = try SQLiteStorageClient(path: directory.appending("target.sqlite").path,
                                             encryptor: AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore()))
        let client = AuthenticatorClient(storage: target)
        let entry = try client.addAccount(uri: "otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank")
        // What a migration from store A, killed before A let go, leaves in the target.
        try client.lock(entry.account, policy: StorageMigration.movingPolicy(from: "sqlite /a/authenticator.sqlite"))
        _ = try StorageMigration.move(from: MemoryStorageClient(), to: target, sourceName: "sqlite /b/authenticator.sqlite")
        #expect(target.getAllAccounts().first?.isLocked == true, "store B's migration knows nothing of A's accounts")
        #expect { _ = try client.code(for: entry.mechanisms[0]) } throws: { error in
            (error as? LocalizedError)?.errorDescription?.contains("being moved here by a migration (from sqlite /a/authenticator.sqlite)") == true
        }
        _ = try StorageMigration.move(from: MemoryStorageClient(), to: target, sourceName: "sqlite /a/authenticator.sqlite")
        #expect(target.getAllAccounts().first?.isLocked == false, "A's next migration finds A let go, and unlocks")
    }
}

/// A real storage client that runs `afterInsert` once, right after its first mechanism is
/// inserted: the moment another process could use the copy.
final class AfterInsert: StorageClient {
    let real: SQLiteStorageClient
    private var pending: (() -> Void)?

    init(_ real: SQLiteStorageClient, afterInsert: @escaping () -> Void) {
        self.real = real
        pending = afterInsert
    }

    func insertMechanism(_ mechanism: Mechanism) throws {
        try real.insertMechanism(mechanism)
        let run = pending
        pending = nil
        run?()
    }

    @discardableResult func setAccount(account: Account) -> Bool { real.setAccount(account: account) }
    @discardableResult func removeAccount(account: Account) -> Bool { real.removeAccount(account: account) }
    func getAccount(accountIdentifier: String) -> Account? { real.getAccount(accountIdentifier: accountIdentifier) }
    func getAllAccounts() -> [Account] { real.getAllAccounts() }
    @discardableResult func updateAccount(accountIdentifier: String, _ change: (inout Account) throws -> Void) throws -> Account {
        try real.updateAccount(accountIdentifier: accountIdentifier, change)
    }
    @discardableResult func setMechanism(mechanism: Mechanism) -> Bool { real.setMechanism(mechanism: mechanism) }
    @discardableResult func removeMechanism(mechanism: Mechanism) -> Bool { real.removeMechanism(mechanism: mechanism) }
    func removeMechanismIfUnchanged(_ mechanism: Mechanism) throws -> Bool { try real.removeMechanismIfUnchanged(mechanism) }
    func advanceCounter(mechanismUUID: String) throws -> Mechanism { try real.advanceCounter(mechanismUUID: mechanismUUID) }
    func getMechanismsForAccount(account: Account) -> [Mechanism] { real.getMechanismsForAccount(account: account) }
    func getMechanismForUUID(uuid: String) -> Mechanism? { real.getMechanismForUUID(uuid: uuid) }
    @discardableResult func setNotification(notification: PushNotification) -> Bool { real.setNotification(notification: notification) }
    @discardableResult func removeNotification(notification: PushNotification) -> Bool { real.removeNotification(notification: notification) }
    func getAllNotificationsForMechanism(mechanism: Mechanism) -> [PushNotification] { real.getAllNotificationsForMechanism(mechanism: mechanism) }
    @discardableResult func isEmpty() -> Bool { real.isEmpty() }
    @discardableResult func setPushDeviceToken(_ token: PushDeviceToken) -> Bool { real.setPushDeviceToken(token) }
    func getPushDeviceToken() -> PushDeviceToken? { real.getPushDeviceToken() }
    @discardableResult func removePushDeviceToken() -> Bool { real.removePushDeviceToken() }
}
