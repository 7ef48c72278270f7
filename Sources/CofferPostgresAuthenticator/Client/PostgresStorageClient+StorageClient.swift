import CofferPostgres
import CofferStorage
import CofferMFAEngine
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

    /// Stores the account (``save(_:)-(Account)``); `false` on failure, with the cause in
    /// ``lastError``.
    @discardableResult public func setAccount(account: Account) -> Bool {
        blocking("setAccount") { try await self.save(account); return true } ?? false
    }

    /// Removes the account when it owns no mechanism any more; one that does is left, with
    /// `StorageClientError.stillOwnsRecords` in ``lastError``.
    @discardableResult public func removeAccount(account: Account) -> Bool {
        blocking("removeAccount") { try await self.delete(account) } ?? false
    }

    /// Reads the account, applies `change` and stores it by compare-and-swap
    /// (``update(_:to:)``), reading again while another writer got there first: a concurrent
    /// lock, rename or removal is never undone.
    ///
    /// - Throws: `StorageClientError` when there is no such account or `change` alters its
    ///   identity; `PostgresStorageError` when the database fails.
    @discardableResult
    public func updateAccount(accountIdentifier: String, _ change: (inout Account) throws -> Void) throws -> Account {
        let parts = IdentifierCoding.split(accountIdentifier)
        while true {
            let stored = parts.count == 2
                ? try blockingThrows("updateAccount") { try await self.account(issuer: parts[0], accountName: parts[1]) } : nil
            guard let stored else { throw StorageClientError.accountNotFound(identifier: accountIdentifier) }
            let changed = try stored.changed(by: change)
            if try blockingThrows("updateAccount", { [changed] in try await self.update(stored, to: changed) }) { return changed }
        }
    }

    /// The account with this identifier (`issuer-accountName`, escaped as
    /// `Account.identifier` escapes it), or `nil` when there is none or the database failed
    /// (then ``lastError`` says why).
    public func getAccount(accountIdentifier: String) -> Account? {
        let parts = IdentifierCoding.split(accountIdentifier)
        guard parts.count == 2 else { return nil }
        return blocking("getAccount") { try await self.account(issuer: parts[0], accountName: parts[1]) } ?? nil
    }

    /// Every account of this owner (``allAccounts()``); `[]` on failure, with the cause in
    /// ``lastError``.
    public func getAllAccounts() -> [Account] {
        blocking("getAllAccounts") { try await self.allAccounts() } ?? []
    }

    /// Every account's names (``allAccountNames()``), without opening anything.
    public func getAllAccountNames() -> [AccountNames] {
        blocking("getAllAccountNames") { try await self.allAccountNames() } ?? []
    }

    /// Stores the mechanism, its secret sealed; `false` on failure, with the cause in ``lastError``
    /// (another object under the same id is such a failure: nothing is replaced).
    @discardableResult public func setMechanism(mechanism: Mechanism) -> Bool {
        blocking("setMechanism") { try await self.save(mechanism); return true } ?? false
    }

    /// Removes the mechanism when it owns no notification any more (see
    /// ``removeAccount(account:)``).
    @discardableResult public func removeMechanism(mechanism: Mechanism) -> Bool {
        blocking("removeMechanism") { try await self.delete(mechanism) } ?? false
    }

    /// The account's mechanisms (``mechanisms(of:)``); `[]` on failure, with the cause in
    /// ``lastError``.
    public func getMechanismsForAccount(account: Account) -> [Mechanism] {
        blocking("getMechanismsForAccount") { try await self.mechanisms(of: account) } ?? []
    }

    /// The mechanism with this id, or `nil` when there is none or the database failed (then
    /// ``lastError`` says why).
    public func getMechanismForUUID(uuid: String) -> Mechanism? {
        blocking("getMechanismForUUID") { try await self.mechanism(uuid: uuid) } ?? nil
    }

    /// Stores a new mechanism and never replaces one (``insert(_:)``).
    ///
    /// - Throws: `StorageClientError` when the id or the account's mechanism of that type is
    ///   taken; `PostgresStorageError` when the database fails.
    public func insertMechanism(_ mechanism: Mechanism) throws {
        try blockingThrows("insertMechanism") { try await self.insert(mechanism) }
    }

    /// Removes the mechanism only if its stored counter is still `mechanism.counter`
    /// (``deleteIfUnchanged(_:)``): `coffer migrate` uses it, so a code issued meanwhile is never
    /// issued again from the target.
    ///
    /// - Returns: whether it was removed.
    /// - Throws: `PostgresStorageError` when the database fails.
    public func removeMechanismIfUnchanged(_ mechanism: Mechanism) throws -> Bool {
        try blockingThrows("removeMechanismIfUnchanged") { try await self.deleteIfUnchanged(mechanism) }
    }

    /// Moves the HOTP counter on by one and returns the mechanism with the counter to make a code
    /// from (``advanceCounter(of:)``); no two callers, on any instance, get the same value.
    ///
    /// - Throws: `StorageClientError` when there is no such HOTP mechanism;
    ///   `PostgresStorageError` when the database fails.
    public func advanceCounter(mechanismUUID: String) throws -> Mechanism {
        try blockingThrows("advanceCounter") { try await self.advanceCounter(of: mechanismUUID) }
    }

    /// Stores the notification, its challenge sealed; `false` on failure, with the cause in
    /// ``lastError``.
    @discardableResult public func setNotification(notification: PushNotification) -> Bool {
        blocking("setNotification") { try await self.save(notification); return true } ?? false
    }

    /// Removes the notification; `false` when there was none or the database failed (then
    /// ``lastError`` says why).
    @discardableResult public func removeNotification(notification: PushNotification) -> Bool {
        blocking("removeNotification") { try await self.delete(notification) } ?? false
    }

    /// The mechanism's notifications, oldest first (``notifications(of:)``); `[]` on failure, with
    /// the cause in ``lastError``.
    public func getAllNotificationsForMechanism(mechanism: Mechanism) -> [PushNotification] {
        blocking("getAllNotificationsForMechanism") { try await self.notifications(of: mechanism) } ?? []
    }

    /// The mechanism's notification with this message id, or `nil` when there is none or the
    /// database failed (then ``lastError`` says why).
    public func getNotification(messageId: String, mechanism: Mechanism) -> PushNotification? {
        blocking("getNotification") { try await self.notification(messageId: messageId, of: mechanism) } ?? nil
    }

    /// Every notification of this owner (``allNotifications()``); `[]` on failure, with the cause in
    /// ``lastError``.
    public func getAllNotifications() -> [PushNotification] {
        blocking("getAllNotifications") { try await self.allNotifications() } ?? []
    }

    /// Whether this owner has no accounts, mechanisms or notifications; `false` when the database
    /// failed, so a caller never takes an unreachable store for an empty one.
    @discardableResult public func isEmpty() -> Bool {
        blocking("isEmpty") { try await self.recordCounts() }.map { $0 == (0, 0, 0) } ?? false
    }

    /// Stores the push device token; `false` on failure, with the cause in ``lastError``.
    @discardableResult public func setPushDeviceToken(_ token: PushDeviceToken) -> Bool {
        blocking("setPushDeviceToken") { try await self.save(token); return true } ?? false
    }

    /// The push device token, or `nil` when there is none or the database failed (then
    /// ``lastError`` says why).
    public func getPushDeviceToken() -> PushDeviceToken? {
        blocking("getPushDeviceToken") { try await self.pushDeviceToken() } ?? nil
    }

    /// Removes the push device token; `false` when there was none or the database failed (then
    /// ``lastError`` says why).
    @discardableResult public func removePushDeviceToken() -> Bool {
        blocking("removePushDeviceToken") { try await self.deletePushDeviceToken() } ?? false
    }
}
