/// How stored notifications are purged: after each notification is processed (for its
/// credential), on ``PushClient/cleanupNotifications(credentialId:)``, and on
/// ``PushClient/close()`` (for all).
public struct NotificationCleanupConfig: Sendable {
    /// What decides which notifications go.
    public enum CleanupMode: String, CaseIterable, Sendable {
        /// Keep everything.
        case none = "NONE"
        /// Keep the newest ``NotificationCleanupConfig/maxStoredNotifications``.
        case countBased = "COUNT_BASED"
        /// Keep those younger than ``NotificationCleanupConfig/maxNotificationAgeDays``.
        case ageBased = "AGE_BASED"
        /// Count first, then age.
        case hybrid = "HYBRID"
    }

    /// The mode.
    public let cleanupMode: CleanupMode
    /// How many notifications to keep (at least 1).
    public let maxStoredNotifications: Int
    /// How many days to keep them (at least 1).
    public let maxNotificationAgeDays: Int

    /// A configuration; counts and ages below 1 become 1.
    public init(cleanupMode: CleanupMode = .countBased, maxStoredNotifications: Int = 100, maxNotificationAgeDays: Int = 30) {
        self.cleanupMode = cleanupMode
        self.maxStoredNotifications = max(1, maxStoredNotifications)
        self.maxNotificationAgeDays = max(1, maxNotificationAgeDays)
    }

    /// Count-based, 100 notifications, 30 days.
    public static func `default`() -> NotificationCleanupConfig { NotificationCleanupConfig() }
    /// No cleanup.
    public static func none() -> NotificationCleanupConfig { NotificationCleanupConfig(cleanupMode: .none) }
    /// The newest `maxNotifications`.
    public static func countBased(maxNotifications: Int = 100) -> NotificationCleanupConfig {
        NotificationCleanupConfig(cleanupMode: .countBased, maxStoredNotifications: maxNotifications)
    }
    /// Those younger than `maxAgeDays`.
    public static func ageBased(maxAgeDays: Int = 30) -> NotificationCleanupConfig {
        NotificationCleanupConfig(cleanupMode: .ageBased, maxNotificationAgeDays: maxAgeDays)
    }
    /// Count, then age.
    public static func hybrid(maxNotifications: Int = 100, maxAgeDays: Int = 30) -> NotificationCleanupConfig {
        NotificationCleanupConfig(cleanupMode: .hybrid, maxStoredNotifications: maxNotifications, maxNotificationAgeDays: maxAgeDays)
    }
}
