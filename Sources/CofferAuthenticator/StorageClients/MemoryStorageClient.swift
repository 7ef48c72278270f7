import Foundation
import Synchronization

/// A ``StorageClient`` that keeps everything in memory, for tests and short-lived tools.
/// Thread-safe; gone when the instance is.
public final class MemoryStorageClient: StorageClient, Sendable {
    private struct State {
        var accounts: [AccountKey: Account] = [:]
        var mechanisms: [String: Mechanism] = [:]
        var notifications: [NotificationKey: PushNotification] = [:]
        var token: PushDeviceToken?
    }

    private let state = Mutex(State())

    /// Creates an empty client.
    public init() {}

    @discardableResult public func setAccount(account: Account) -> Bool {
        state.withLock { $0.accounts[AccountKey(account)] = account }
        return true
    }

    @discardableResult public func removeAccount(account: Account) -> Bool {
        state.withLock { $0.accounts.removeValue(forKey: AccountKey(account)) != nil }
    }

    public func getAccount(accountIdentifier: String) -> Account? {
        state.withLock { $0.accounts.values.first { $0.identifier == accountIdentifier } }
    }

    public func getAllAccounts() -> [Account] {
        state.withLock { $0.accounts.values.sorted(by: AccountKey.order) }
    }

    /// Stores or updates `mechanism`; returns `false` (writing nothing) when that would replace
    /// another object: its UUID held by another account or type, or its account already having
    /// that type under another UUID.
    @discardableResult public func setMechanism(mechanism: Mechanism) -> Bool {
        state.withLock { state in
            let sameObject = { (other: Mechanism) in
                other.issuer == mechanism.issuer && other.accountName == mechanism.accountName && other.type == mechanism.type
            }
            if let existing = state.mechanisms[mechanism.mechanismUUID], !sameObject(existing) { return false }
            if state.mechanisms.values.contains(where: { sameObject($0) && $0.mechanismUUID != mechanism.mechanismUUID }) { return false }
            let owner = AccountKey(issuer: mechanism.issuer, accountName: mechanism.accountName)
            if state.accounts[owner] == nil {
                state.accounts[owner] = Account(issuer: mechanism.issuer, accountName: mechanism.accountName, timeAdded: mechanism.timeAdded)
            }
            state.mechanisms[mechanism.mechanismUUID] = mechanism
            return true
        }
    }

    public func insertMechanism(_ mechanism: Mechanism) throws {
        try state.withLock { (state) throws(StorageClientError) in
            if state.mechanisms[mechanism.mechanismUUID] != nil { throw .uuidTaken(uuid: mechanism.mechanismUUID) }
            if state.mechanisms.values.contains(where: {
                $0.issuer == mechanism.issuer && $0.accountName == mechanism.accountName && $0.type == mechanism.type
            }) {
                throw .mechanismExists(issuer: mechanism.issuer, accountName: mechanism.accountName, type: mechanism.type)
            }
            let owner = AccountKey(issuer: mechanism.issuer, accountName: mechanism.accountName)
            if state.accounts[owner] == nil {
                state.accounts[owner] = Account(issuer: mechanism.issuer, accountName: mechanism.accountName, timeAdded: mechanism.timeAdded)
            }
            state.mechanisms[mechanism.mechanismUUID] = mechanism
        }
    }

    public func advanceCounter(mechanismUUID: String) throws -> Mechanism {
        try state.withLock { (state) throws(StorageClientError) in
            guard let current = state.mechanisms[mechanismUUID] else { throw .mechanismNotFound(uuid: mechanismUUID) }
            state.mechanisms[mechanismUUID]?.counter = try current.nextCounter()
            return current
        }
    }

    /// Compares the counter and removes under the same lock.
    public func removeMechanismIfUnchanged(_ mechanism: Mechanism) throws -> Bool {
        try state.withLock { (state) throws(StorageClientError) in
            guard let current = state.mechanisms[mechanism.mechanismUUID] else { throw .mechanismNotFound(uuid: mechanism.mechanismUUID) }
            guard current.counter == mechanism.counter else { return false }
            state.mechanisms[mechanism.mechanismUUID] = nil
            return true
        }
    }

    /// Reads, changes and writes the account under one lock.
    @discardableResult
    public func updateAccount(accountIdentifier: String, _ change: (inout Account) throws -> Void) throws -> Account {
        try state.withLock { state in
            guard let (key, stored) = state.accounts.first(where: { $0.value.identifier == accountIdentifier }) else {
                throw StorageClientError.accountNotFound(identifier: accountIdentifier)
            }
            let account = try stored.changed(by: change)
            state.accounts[key] = account
            return account
        }
    }

    @discardableResult public func removeMechanism(mechanism: Mechanism) -> Bool {
        state.withLock { $0.mechanisms.removeValue(forKey: mechanism.mechanismUUID) != nil }
    }

    public func getMechanismsForAccount(account: Account) -> [Mechanism] {
        state.withLock { state in
            state.mechanisms.values
                .filter { $0.issuer == account.issuer && $0.accountName == account.accountName }
                .sorted(by: RecordOrder.mechanisms)
        }
    }

    public func getMechanismForUUID(uuid: String) -> Mechanism? {
        state.withLock { $0.mechanisms[uuid] }
    }

    @discardableResult public func setNotification(notification: PushNotification) -> Bool {
        state.withLock { $0.notifications[NotificationKey(notification)] = notification }
        return true
    }

    @discardableResult public func removeNotification(notification: PushNotification) -> Bool {
        state.withLock { $0.notifications.removeValue(forKey: NotificationKey(notification)) != nil }
    }

    public func getAllNotificationsForMechanism(mechanism: Mechanism) -> [PushNotification] {
        state.withLock { state in
            state.notifications.values.filter { $0.mechanismUUID == mechanism.mechanismUUID }
                .sorted(by: RecordOrder.notifications)
        }
    }

    public func getAllNotifications() -> [PushNotification] {
        state.withLock { $0.notifications.values.sorted(by: RecordOrder.notifications) }
    }

    @discardableResult public func isEmpty() -> Bool {
        state.withLock { $0.accounts.isEmpty && $0.mechanisms.isEmpty && $0.notifications.isEmpty }
    }

    @discardableResult public func setPushDeviceToken(_ token: PushDeviceToken) -> Bool {
        state.withLock { $0.token = token }
        return true
    }

    public func getPushDeviceToken() -> PushDeviceToken? { state.withLock { $0.token } }

    @discardableResult public func removePushDeviceToken() -> Bool {
        state.withLock { state in
            defer { state.token = nil }
            return state.token != nil
        }
    }
}

/// An account's identity as a dictionary key.
struct AccountKey: Hashable {
    let issuer: String
    let accountName: String

    init(issuer: String, accountName: String) {
        self.issuer = issuer
        self.accountName = accountName
    }

    init(_ account: Account) {
        self.init(issuer: account.issuer, accountName: account.accountName)
    }

    /// Oldest first, then by issuer and name: the order clients return accounts in.
    static func order(_ a: Account, _ b: Account) -> Bool {
        (a.timeAdded, a.issuer, a.accountName) < (b.timeAdded, b.issuer, b.accountName)
    }
}

/// The order clients return records in (the SQLite client sorts the same way in SQL).
enum RecordOrder {
    /// Mechanisms: oldest first, then by UUID.
    static func mechanisms(_ a: Mechanism, _ b: Mechanism) -> Bool {
        (a.timeAdded, a.mechanismUUID) < (b.timeAdded, b.mechanismUUID)
    }

    /// Notifications: oldest first, then by message id.
    static func notifications(_ a: PushNotification, _ b: PushNotification) -> Bool {
        (a.timeAdded, a.messageId) < (b.timeAdded, b.messageId)
    }
}

/// A notification's identity (message id within its mechanism) as a dictionary key.
struct NotificationKey: Hashable {
    let mechanismUUID: String
    let messageId: String

    init(_ notification: PushNotification) {
        mechanismUUID = notification.mechanismUUID
        messageId = notification.messageId
    }
}
