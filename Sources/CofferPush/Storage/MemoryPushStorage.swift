import CofferMFACommons
import Foundation
import Synchronization

/// Push credentials, notifications and the device token in memory, for tests and previews:
/// nothing is written anywhere, secrets and challenges included (they live in this process's
/// memory until it ends). Removing a credential removes its notifications in the same step.
/// Ids are told apart byte for byte, as SQLite and the keyring tell them.
public final class MemoryPushStorage: PushStorage {
    private struct State {
        var credentials: [StoredID: PushCredential] = [:]
        var notifications: [StoredID: PushNotification] = [:]
        var token: PushDeviceToken?
    }

    private let state = Mutex(State())

    /// An empty storage.
    public init() {}

    public func storePushCredential(_ credential: PushCredential) async throws {
        state.withLock { $0.credentials[credential.id.storedID] = credential }
    }

    /// Every credential, newest first (as Ping's SQL storage lists them).
    public func getAllPushCredentials() async throws -> [PushCredential] {
        NotificationRules.newestFirst(state.withLock { Array($0.credentials.values) })
    }

    public func retrievePushCredential(credentialId: String) async throws -> PushCredential? {
        state.withLock { $0.credentials[credentialId.storedID] }
    }

    /// Removes the credential and its notifications together.
    public func removePushCredential(credentialId: String) async throws -> Bool {
        state.withLock { state in
            state.notifications = state.notifications.filter { !$0.value.credentialId.isSameStoredID(as: credentialId) }
            return state.credentials.removeValue(forKey: credentialId.storedID) != nil
        }
    }

    /// Removes every credential and every notification.
    public func clearPushCredentials() async throws {
        state.withLock { state in
            state.notifications.removeAll()
            state.credentials.removeAll()
        }
    }

    public func storePushNotification(_ notification: PushNotification) async throws {
        state.withLock { $0.notifications[notification.id.storedID] = notification }
    }

    public func updatePushNotification(_ notification: PushNotification) async throws {
        try await storePushNotification(notification)
    }

    public func getAllPushNotifications() async throws -> [PushNotification] {
        NotificationRules.newestFirst(all())
    }

    public func getPendingPushNotifications() async throws -> [PushNotification] {
        NotificationRules.pending(all())
    }

    public func retrievePushNotification(notificationId: String) async throws -> PushNotification? {
        state.withLock { $0.notifications[notificationId.storedID] }
    }

    /// The newest with this message id; `nil` for a blank one.
    public func getNotificationByMessageId(messageId: String) async throws -> PushNotification? {
        guard !messageId.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return NotificationRules.newest(all(), messageId: messageId)
    }

    public func removePushNotification(notificationId: String) async throws -> Bool {
        state.withLock { $0.notifications.removeValue(forKey: notificationId.storedID) != nil }
    }

    public func removePushNotificationsForCredential(credentialId: String) async throws -> Int {
        remove { NotificationRules.inScope(Array($0.values), credentialId).map(\.id) }
    }

    public func clearPushNotifications() async throws {
        state.withLock { $0.notifications.removeAll() }
    }

    public func storePushDeviceToken(_ token: PushDeviceToken) async throws {
        state.withLock { $0.token = token }
    }

    public func getCurrentPushDeviceToken() async throws -> PushDeviceToken? {
        state.withLock { $0.token }
    }

    public func clearPushDeviceTokens() async throws {
        state.withLock { $0.token = nil }
    }

    public func countPushNotifications(credentialId: String?) async throws -> Int {
        NotificationRules.inScope(all(), credentialId).count
    }

    public func getOldestPushNotifications(limit: Int, credentialId: String?) async throws -> [PushNotification] {
        NotificationRules.oldest(all(), limit: limit, credentialId)
    }

    public func purgePushNotificationsByAge(maxAgeDays: Int, credentialId: String?) async throws -> Int {
        remove { NotificationRules.olderThan(Array($0.values), maxAgeDays: maxAgeDays, credentialId) }
    }

    public func purgePushNotificationsByCount(maxCount: Int, credentialId: String?) async throws -> Int {
        remove { NotificationRules.beyondCount(Array($0.values), maxCount: maxCount, credentialId) }
    }

    private func all() -> [PushNotification] {
        state.withLock { Array($0.notifications.values) }
    }

    /// Chooses and removes in one step, so a notification stored meanwhile is never chosen
    /// from a stale list.
    private func remove(_ choose: ([StoredID: PushNotification]) -> [String]) -> Int {
        state.withLock { state in
            let ids = choose(state.notifications)
            for id in ids { state.notifications[id.storedID] = nil }
            return ids.count
        }
    }
}
