import Foundation

/// Moves everything from one ``StorageClient`` to another, verifying before removing.
public enum StorageMigration {
    /// What a migration moved.
    public struct Report: Sendable, Equatable {
        /// Accounts moved.
        public var accounts = 0
        /// Mechanisms moved.
        public var mechanisms = 0
        /// Notifications moved.
        public var notifications = 0

        /// A report with these counts.
        public init(accounts: Int = 0, mechanisms: Int = 0, notifications: Int = 0) {
            self.accounts = accounts
            self.mechanisms = mechanisms
            self.notifications = notifications
        }
    }

    /// Why a migration stopped. The source is unchanged whenever one is thrown.
    public enum Failure: Error, LocalizedError, Sendable {
        /// The target already holds these accounts.
        case targetNotEmpty([String])
        /// Writing to the target failed.
        case writeFailed(String)
        /// What was read back from the target differs from the source.
        case verificationFailed(String)
        /// Removing from the source failed after the copy was verified: both hold the data now.
        case sourceCleanupFailed(String)

        public var errorDescription: String? {
            switch self {
            case .targetNotEmpty(let accounts):
                return "The target already holds \(accounts.prefix(5).joined(separator: ", ")); nothing was moved. Remove them there first."
            case .writeFailed(let what): return "Could not write \(what) to the target; the source is unchanged."
            case .verificationFailed(let what): return "\(what) reads back differently from the target; the source is unchanged."
            case .sourceCleanupFailed(let what):
                return "Everything was copied and verified, but \(what) could not be removed from the source: both hold it now."
            }
        }
    }

    /// Copies every account, mechanism and notification from `source` to `target`, reads them
    /// all back from `target` and compares, and only then removes them from `source`.
    public static func move(from source: any StorageClient, to target: any StorageClient) throws(Failure) -> Report {
        let accounts = source.getAllAccounts()
        let clashes = accounts.filter { target.getAccount(accountIdentifier: $0.identifier) != nil }
        guard clashes.isEmpty else { throw .targetNotEmpty(clashes.map { "\($0.issuer): \($0.accountName)" }) }

        var report = Report()
        var moved: [(Account, [(Mechanism, [PushNotification])])] = []
        for account in accounts {
            guard target.setAccount(account: account) else { throw .writeFailed("the account \(account.issuer): \(account.accountName)") }
            var mechanisms: [(Mechanism, [PushNotification])] = []
            for mechanism in source.getMechanismsForAccount(account: account) {
                guard target.setMechanism(mechanism: mechanism) else { throw .writeFailed("a mechanism of \(account.issuer): \(account.accountName)") }
                let notifications = source.getAllNotificationsForMechanism(mechanism: mechanism)
                for notification in notifications where !target.setNotification(notification: notification) {
                    throw .writeFailed("a notification of \(account.issuer): \(account.accountName)")
                }
                mechanisms.append((mechanism, notifications))
            }
            moved.append((account, mechanisms))
        }

        for (account, mechanisms) in moved {
            guard target.getAccount(accountIdentifier: account.identifier) == account else {
                throw .verificationFailed("The account \(account.issuer): \(account.accountName)")
            }
            for (mechanism, notifications) in mechanisms {
                guard target.getMechanismForUUID(uuid: mechanism.mechanismUUID) == mechanism,
                      Set(target.getAllNotificationsForMechanism(mechanism: mechanism).map(\.identifier)) == Set(notifications.map(\.identifier)) else {
                    throw .verificationFailed("A mechanism of \(account.issuer): \(account.accountName)")
                }
            }
        }

        for (account, mechanisms) in moved {
            for (mechanism, notifications) in mechanisms {
                for notification in notifications where !source.removeNotification(notification: notification) {
                    throw .sourceCleanupFailed("a notification of \(account.issuer): \(account.accountName)")
                }
                guard source.removeMechanism(mechanism: mechanism) else { throw .sourceCleanupFailed("a mechanism of \(account.issuer): \(account.accountName)") }
                report.mechanisms += 1
                report.notifications += notifications.count
            }
            // A cascading store may have removed the account with its last mechanism already.
            if source.getAccount(accountIdentifier: account.identifier) != nil, !source.removeAccount(account: account) {
                throw .sourceCleanupFailed("the account \(account.issuer): \(account.accountName)")
            }
            report.accounts += 1
        }
        return report
    }
}
