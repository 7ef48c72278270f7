import CofferAuthenticator
import Foundation

/// The spec's synchronous protocol, over the async API: each call blocks its thread until the
/// database answers (at most the operation deadline). Failures answer `false`, `nil` or `[]`,
/// as the protocol requires, with the cause in ``PostgresStorageClient/lastError``. Servers use
/// the async API instead.
extension PostgresStorageClient: StorageClient {
    /// Runs `body` to completion; on failure records the error and returns `nil`.
    private func blocking<R: Sendable>(_ operation: String, _ body: @escaping @Sendable () async throws -> R) -> R? {
        diagnostics.attempt(operation) { try SyncBridge.run(body) }
    }

    private func blockingThrows<R: Sendable>(_ operation: String, _ body: @escaping @Sendable () async throws -> R) throws -> R {
        try diagnostics.attemptThrowing(operation) { try SyncBridge.run(body) }
    }

    @discardableResult public func setAccount(account: Account) -> Bool {
        blocking("setAccount") { try await self.save(account); return true } ?? false
    }

    /// Removes the account when it owns no mechanism any more; one that does is left, with
    /// `StorageClientError.stillOwnsRecords` in ``lastError``.
    @discardableResult public func removeAccount(account: Account) -> Bool {
        blocking("removeAccount") { try await self.delete(account) } ?? false
    }

    public func getAccount(accountIdentifier: String) -> Account? {
        let parts = IdentifierCoding.split(accountIdentifier)
        guard parts.count == 2 else { return nil }
        return blocking("getAccount") { try await self.account(issuer: parts[0], accountName: parts[1]) } ?? nil
    }

    public func getAllAccounts() -> [Account] {
        blocking("getAllAccounts") { try await self.allAccounts() } ?? []
    }

    @discardableResult public func setMechanism(mechanism: Mechanism) -> Bool {
        blocking("setMechanism") { try await self.save(mechanism); return true } ?? false
    }

    /// Removes the mechanism when it owns no notification any more (see
    /// ``removeAccount(account:)``).
    @discardableResult public func removeMechanism(mechanism: Mechanism) -> Bool {
        blocking("removeMechanism") { try await self.delete(mechanism) } ?? false
    }

    public func getMechanismsForAccount(account: Account) -> [Mechanism] {
        blocking("getMechanismsForAccount") { try await self.mechanisms(of: account) } ?? []
    }

    public func getMechanismForUUID(uuid: String) -> Mechanism? {
        blocking("getMechanismForUUID") { try await self.mechanism(uuid: uuid) } ?? nil
    }

    public func insertMechanism(_ mechanism: Mechanism) throws {
        try blockingThrows("insertMechanism") { try await self.insert(mechanism) }
    }

    public func removeMechanismIfUnchanged(_ mechanism: Mechanism) throws -> Bool {
        try blockingThrows("removeMechanismIfUnchanged") { try await self.deleteIfUnchanged(mechanism) }
    }

    public func advanceCounter(mechanismUUID: String) throws -> Mechanism {
        try blockingThrows("advanceCounter") { try await self.advanceCounter(of: mechanismUUID) }
    }

    @discardableResult public func setNotification(notification: PushNotification) -> Bool {
        blocking("setNotification") { try await self.save(notification); return true } ?? false
    }

    @discardableResult public func removeNotification(notification: PushNotification) -> Bool {
        blocking("removeNotification") { try await self.delete(notification) } ?? false
    }

    public func getAllNotificationsForMechanism(mechanism: Mechanism) -> [PushNotification] {
        blocking("getAllNotificationsForMechanism") { try await self.notifications(of: mechanism) } ?? []
    }

    public func getNotification(messageId: String, mechanism: Mechanism) -> PushNotification? {
        blocking("getNotification") { try await self.notification(messageId: messageId, of: mechanism) } ?? nil
    }

    public func getAllNotifications() -> [PushNotification] {
        blocking("getAllNotifications") { try await self.allNotifications() } ?? []
    }

    @discardableResult public func isEmpty() -> Bool {
        blocking("isEmpty") { try await self.recordCounts() }.map { $0 == (0, 0, 0) } ?? false
    }

    @discardableResult public func setPushDeviceToken(_ token: PushDeviceToken) -> Bool {
        blocking("setPushDeviceToken") { try await self.save(token); return true } ?? false
    }

    public func getPushDeviceToken() -> PushDeviceToken? {
        blocking("getPushDeviceToken") { try await self.pushDeviceToken() } ?? nil
    }

    @discardableResult public func removePushDeviceToken() -> Bool {
        blocking("removePushDeviceToken") { try await self.deletePushDeviceToken() } ?? false
    }
}
