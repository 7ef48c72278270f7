import CofferAuthenticator
import CofferOath
import CofferPush
import Foundation
import Synchronization

/// How many more writes may succeed before the "process dies": every write after that fails,
/// as a killed process writes nothing more. Shared by the wrappers of one run.
final class WriteBudget: Sendable {
    private let remaining: Mutex<Int>
    init(_ writes: Int) { remaining = Mutex(writes) }
    /// Whether the next write may happen (and counts it).
    func spend() -> Bool { remaining.withLock { $0 -= 1; return $0 >= 0 } }
    var exhausted: Bool { remaining.withLock { $0 < 0 } }
}

struct Killed: Error {}

/// An OATH storage whose writes stop at the budget (the fault); everything else is the real one's.
struct DyingOathStorage: OathCounterStorage {
    let storage: any OathCounterStorage
    let budget: WriteBudget

    func storeOathCredential(_ credential: OathCredential) async throws {
        guard budget.spend() else { throw Killed() }
        try await storage.storeOathCredential(credential)
    }
    func retrieveOathCredential(credentialId: String) async throws -> OathCredential? { try await storage.retrieveOathCredential(credentialId: credentialId) }
    func getAllOathCredentials() async throws -> [OathCredential] { try await storage.getAllOathCredentials() }
    func removeOathCredential(credentialId: String) async throws -> Bool {
        guard budget.spend() else { throw Killed() }
        return try await storage.removeOathCredential(credentialId: credentialId)
    }
    func clearOathCredentials() async throws {
        guard budget.spend() else { throw Killed() }
        try await storage.clearOathCredentials()
    }
    func updateOathCredential(credentialId: String, _ change: @Sendable (OathCredential) throws -> OathCredential) async throws -> OathCredential? {
        guard budget.spend() else { throw Killed() }
        return try await storage.updateOathCredential(credentialId: credentialId, change)
    }
}

/// A push storage whose writes stop at the budget.
struct DyingPushStorage: PushStorage {
    let storage: any PushStorage
    let budget: WriteBudget

    private func write<R>(_ body: () async throws -> R) async throws -> R {
        guard budget.spend() else { throw Killed() }
        return try await body()
    }
    func storePushCredential(_ credential: PushCredential) async throws { try await write { try await storage.storePushCredential(credential) } }
    func getAllPushCredentials() async throws -> [PushCredential] { try await storage.getAllPushCredentials() }
    func retrievePushCredential(credentialId: String) async throws -> PushCredential? { try await storage.retrievePushCredential(credentialId: credentialId) }
    func removePushCredential(credentialId: String) async throws -> Bool { try await write { try await storage.removePushCredential(credentialId: credentialId) } }
    func clearPushCredentials() async throws { try await write { try await storage.clearPushCredentials() } }
    func storePushNotification(_ notification: CofferPush.PushNotification) async throws { try await write { try await storage.storePushNotification(notification) } }
    func updatePushNotification(_ notification: CofferPush.PushNotification) async throws { try await write { try await storage.updatePushNotification(notification) } }
    func getAllPushNotifications() async throws -> [CofferPush.PushNotification] { try await storage.getAllPushNotifications() }
    func getPendingPushNotifications() async throws -> [CofferPush.PushNotification] { try await storage.getPendingPushNotifications() }
    func retrievePushNotification(notificationId: String) async throws -> CofferPush.PushNotification? { try await storage.retrievePushNotification(notificationId: notificationId) }
    func getNotificationByMessageId(messageId: String) async throws -> CofferPush.PushNotification? { try await storage.getNotificationByMessageId(messageId: messageId) }
    func removePushNotification(notificationId: String) async throws -> Bool { try await write { try await storage.removePushNotification(notificationId: notificationId) } }
    func removePushNotificationsForCredential(credentialId: String) async throws -> Int {
        try await write { try await storage.removePushNotificationsForCredential(credentialId: credentialId) }
    }
    func clearPushNotifications() async throws { try await write { try await storage.clearPushNotifications() } }
    func storePushDeviceToken(_ token: CofferPush.PushDeviceToken) async throws { try await write { try await storage.storePushDeviceToken(token) } }
    func getCurrentPushDeviceToken() async throws -> CofferPush.PushDeviceToken? { try await storage.getCurrentPushDeviceToken() }
    func clearPushDeviceTokens() async throws { try await write { try await storage.clearPushDeviceTokens() } }
    func countPushNotifications(credentialId: String?) async throws -> Int { try await storage.countPushNotifications(credentialId: credentialId) }
    func getOldestPushNotifications(limit: Int, credentialId: String?) async throws -> [CofferPush.PushNotification] {
        try await storage.getOldestPushNotifications(limit: limit, credentialId: credentialId)
    }
    func purgePushNotificationsByAge(maxAgeDays: Int, credentialId: String?) async throws -> Int {
        try await write { try await storage.purgePushNotificationsByAge(maxAgeDays: maxAgeDays, credentialId: credentialId) }
    }
    func purgePushNotificationsByCount(maxCount: Int, credentialId: String?) async throws -> Int {
        try await write { try await storage.purgePushNotificationsByCount(maxCount: maxCount, credentialId: credentialId) }
    }
}

/// A legacy client whose removals stop at the budget; `beforeRemoval` runs once before the first
/// conditional removal (to issue a code from the source "meanwhile").
final class DyingLegacyClient: StorageClient, Sendable {
    let client: MemoryStorageClient
    let budget: WriteBudget
    let beforeRemoval: Mutex<(@Sendable (MemoryStorageClient) -> Void)?>

    init(_ client: MemoryStorageClient, budget: WriteBudget, beforeRemoval: (@Sendable (MemoryStorageClient) -> Void)? = nil) {
        self.client = client
        self.budget = budget
        self.beforeRemoval = Mutex(beforeRemoval)
    }

    func setAccount(account: Account) -> Bool { budget.spend() && client.setAccount(account: account) }
    func removeAccount(account: Account) -> Bool { budget.spend() && client.removeAccount(account: account) }
    func getAccount(accountIdentifier: String) -> Account? { client.getAccount(accountIdentifier: accountIdentifier) }
    func getAllAccounts() -> [Account] { client.getAllAccounts() }
    func setMechanism(mechanism: Mechanism) -> Bool { budget.spend() && client.setMechanism(mechanism: mechanism) }
    func removeMechanism(mechanism: Mechanism) -> Bool { budget.spend() && client.removeMechanism(mechanism: mechanism) }
    func getMechanismsForAccount(account: Account) -> [Mechanism] { client.getMechanismsForAccount(account: account) }
    func getMechanismForUUID(uuid: String) -> Mechanism? { client.getMechanismForUUID(uuid: uuid) }
    func setNotification(notification: CofferAuthenticator.PushNotification) -> Bool { budget.spend() && client.setNotification(notification: notification) }
    func removeNotification(notification: CofferAuthenticator.PushNotification) -> Bool { budget.spend() && client.removeNotification(notification: notification) }
    func getAllNotificationsForMechanism(mechanism: Mechanism) -> [CofferAuthenticator.PushNotification] { client.getAllNotificationsForMechanism(mechanism: mechanism) }
    func isEmpty() -> Bool { client.isEmpty() }
    func setPushDeviceToken(_ token: CofferAuthenticator.PushDeviceToken) -> Bool { budget.spend() && client.setPushDeviceToken(token) }
    func getPushDeviceToken() -> CofferAuthenticator.PushDeviceToken? { client.getPushDeviceToken() }
    func removePushDeviceToken() -> Bool { budget.spend() && client.removePushDeviceToken() }
    func removeMechanismIfUnchanged(_ mechanism: Mechanism) throws -> Bool {
        if let hook = beforeRemoval.withLock({ hook in defer { hook = nil }; return hook }) { hook(client) }
        guard budget.spend() else { throw Killed() }
        return try client.removeMechanismIfUnchanged(mechanism)
    }
    func advanceCounter(mechanismUUID: String) throws -> Mechanism {
        guard budget.spend() else { throw Killed() }
        return try client.advanceCounter(mechanismUUID: mechanismUUID)
    }
    func insertMechanism(_ mechanism: Mechanism) throws {
        guard budget.spend() else { throw Killed() }
        try client.insertMechanism(mechanism)
    }
    func updateAccount(accountIdentifier: String, _ change: (inout Account) throws -> Void) throws -> Account {
        guard budget.spend() else { throw Killed() }
        return try client.updateAccount(accountIdentifier: accountIdentifier, change)
    }
}
