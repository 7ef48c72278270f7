import CofferMFACommons
import Foundation

/// The rules of listing and purging notifications (reference §3.2, §9), for the storages that
/// hold them in memory or in keyring items (memory, keyring); the SQL storages write the same
/// rules in SQL. Ids are compared and ordered byte for byte (``StoredID``), as SQL compares them.
///
/// Where Ping's keychain storage has a defect, the rules do better: ties in time are broken by
/// id (so order and purges are the same every time), a limit of 0 or less gives nothing rather
/// than trapping, and a negative count purge deletes nothing rather than everything.
package enum NotificationRules {
    /// Newest first; ties by id.
    package static func newestFirst(_ notifications: [PushNotification]) -> [PushNotification] {
        notifications.sorted { ($0.createdAt, $0.id.storedID) > ($1.createdAt, $1.id.storedID) }
    }

    /// Oldest first; ties by id.
    package static func oldestFirst(_ notifications: [PushNotification]) -> [PushNotification] {
        notifications.sorted { ($0.createdAt, $0.id.storedID) < ($1.createdAt, $1.id.storedID) }
    }

    /// Pending and not expired, newest first.
    package static func pending(_ notifications: [PushNotification]) -> [PushNotification] {
        newestFirst(notifications.filter { $0.pending && !$0.isExpired })
    }

    /// Those of `credentialId`, or all when it is `nil`.
    package static func inScope(_ notifications: [PushNotification], _ credentialId: String?) -> [PushNotification] {
        guard let credentialId else { return notifications }
        return notifications.filter { $0.credentialId.isSameStoredID(as: credentialId) }
    }

    /// The newest with `messageId`.
    package static func newest(_ notifications: [PushNotification], messageId: String) -> PushNotification? {
        newestFirst(notifications.filter { $0.messageId.isSameStoredID(as: messageId) }).first
    }

    /// Credentials newest first; ties by id.
    package static func newestFirst(_ credentials: [PushCredential]) -> [PushCredential] {
        credentials.sorted { ($0.createdAt, $0.id.storedID) > ($1.createdAt, $1.id.storedID) }
    }

    /// The oldest `limit` in scope; nothing for a limit of 0 or less.
    package static func oldest(_ notifications: [PushNotification], limit: Int, _ credentialId: String?) -> [PushNotification] {
        guard limit > 0 else { return [] }
        return Array(oldestFirst(inScope(notifications, credentialId)).prefix(limit))
    }

    /// The ids to delete so that the scope keeps its newest `maxCount`; none for a negative count.
    package static func beyondCount(_ notifications: [PushNotification], maxCount: Int, _ credentialId: String?) -> [String] {
        let scope = inScope(notifications, credentialId)
        guard maxCount >= 0, scope.count > maxCount else { return [] }
        return oldestFirst(scope).prefix(scope.count - maxCount).map(\.id)
    }

    /// The ids in scope created strictly before now minus `maxAgeDays` days.
    package static func olderThan(_ notifications: [PushNotification], maxAgeDays: Int, _ credentialId: String?, now: Date = Date()) -> [String] {
        let cutoff = cutoff(maxAgeDays: maxAgeDays, now: now)
        return inScope(notifications, credentialId).filter { $0.createdAt < cutoff }.map(\.id)
    }

    /// Now minus `maxAgeDays` × 86,400 seconds.
    package static func cutoff(maxAgeDays: Int, now: Date = Date()) -> Date {
        now.addingTimeInterval(-Double(maxAgeDays) * 86_400)
    }
}
