/// Where push credentials, notifications and the device token are kept, as Ping's Push module
/// declares it. Implementations must be safe to call from many tasks at once.
///
/// The client relies on these rules (reference §9): stores are upserts by id; a missing id
/// removes as `false`; notifications list newest first; pending means pending and not expired;
/// ``getNotificationByMessageId(messageId:)`` finds a message already stored; one device token
/// is current; ``countPushNotifications(credentialId:)`` with `nil` counts all; both purges
/// delete pending notifications too, the count purge oldest first, the age purge strictly
/// older than now minus the days.
public protocol PushStorage: Sendable {
    /// Stores `credential`, replacing the one with the same id.
    func storePushCredential(_ credential: PushCredential) async throws
    /// Every credential.
    func getAllPushCredentials() async throws -> [PushCredential]
    /// The credential with this id, or `nil`.
    func retrievePushCredential(credentialId: String) async throws -> PushCredential?
    /// Removes the credential; `false` when there was none.
    func removePushCredential(credentialId: String) async throws -> Bool
    /// Removes every credential.
    func clearPushCredentials() async throws
    /// Stores `notification`, replacing the one with the same id.
    func storePushNotification(_ notification: PushNotification) async throws
    /// Stores `notification` (the same as ``storePushNotification(_:)``).
    func updatePushNotification(_ notification: PushNotification) async throws
    /// Every notification, newest first.
    func getAllPushNotifications() async throws -> [PushNotification]
    /// The notifications still pending and not expired, newest first.
    func getPendingPushNotifications() async throws -> [PushNotification]
    /// The notification with this id, or `nil`.
    func retrievePushNotification(notificationId: String) async throws -> PushNotification?
    /// The newest notification with this message id, or `nil`.
    func getNotificationByMessageId(messageId: String) async throws -> PushNotification?
    /// Removes the notification; `false` when there was none.
    func removePushNotification(notificationId: String) async throws -> Bool
    /// Removes the credential's notifications; returns how many.
    func removePushNotificationsForCredential(credentialId: String) async throws -> Int
    /// Removes every notification.
    func clearPushNotifications() async throws
    /// Makes `token` the one current device token.
    func storePushDeviceToken(_ token: PushDeviceToken) async throws
    /// The current device token, or `nil`.
    func getCurrentPushDeviceToken() async throws -> PushDeviceToken?
    /// Removes every device token.
    func clearPushDeviceTokens() async throws
    /// How many notifications there are, of one credential or (`nil`) of all.
    func countPushNotifications(credentialId: String?) async throws -> Int
    /// The oldest `limit` notifications, of one credential or of all.
    func getOldestPushNotifications(limit: Int, credentialId: String?) async throws -> [PushNotification]
    /// Removes the notifications older than `maxAgeDays` days; returns how many.
    func purgePushNotificationsByAge(maxAgeDays: Int, credentialId: String?) async throws -> Int
    /// Removes the oldest notifications beyond `maxCount`; returns how many.
    func purgePushNotificationsByCount(maxCount: Int, credentialId: String?) async throws -> Int
}
