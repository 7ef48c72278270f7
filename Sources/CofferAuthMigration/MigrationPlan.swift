import CofferAuthenticator
import CofferOath
import CofferPush
import Foundation

/// Everything a migration moves, read from the legacy storage before anything is written, and
/// what each record becomes.
struct MigrationPlan {
    struct OathEntry {
        let mechanism: Mechanism
        /// The credential as the account and mechanism give it.
        let credential: OathCredential
        /// As it is stored while it moves: locked by the migration.
        let moving: OathCredential
        let title: String
    }

    struct PushEntry {
        let mechanism: Mechanism
        let credential: PushCredential
        let legacyNotifications: [CofferAuthenticator.PushNotification]
        let notifications: [CofferPush.PushNotification]
        let title: String
    }

    let accounts: [Account]
    var oath: [OathEntry] = []
    var push: [PushEntry] = []
    let token: CofferPush.PushDeviceToken?
    /// Mechanisms the targets cannot hold, each with why.
    var kept: [String] = []

    /// Reads every account, mechanism and notification and the device token of `source`; throws,
    /// having written nothing, when any record cannot be read (moving the rest and removing the
    /// accounts would delete it).
    init(reading source: any StorageClient, policy: String) throws(AuthMigration.Failure) {
        let diagnostics = source as? any StorageClientDiagnostics
        let unreadableBefore = diagnostics?.unreadableRecordCount ?? 0
        accounts = source.getAllAccounts()
        let mechanisms = accounts.map { source.getMechanismsForAccount(account: $0) }
        let notifications = mechanisms.map { $0.map { source.getAllNotificationsForMechanism(mechanism: $0) } }
        token = source.getPushDeviceToken().map(LegacyMapping.deviceToken)
        if let diagnostics, diagnostics.unreadableRecordCount > unreadableBefore {
            let count = diagnostics.unreadableRecordCount - unreadableBefore
            throw .unreadableSource(count: count, records: Array(diagnostics.unreadableRecords.suffix(count)))
        }
        for (account, (owned, ownedNotifications)) in zip(accounts, zip(mechanisms, notifications)) {
            let title = "\(account.issuer): \(account.accountName)"
            for (mechanism, legacy) in zip(owned, ownedNotifications) {
                do throws(LegacyMapping.Unsupported) {
                    if mechanism.type == .push {
                        push.append(PushEntry(mechanism: mechanism, credential: try LegacyMapping.pushCredential(mechanism, of: account),
                                              legacyNotifications: legacy, notifications: legacy.map(LegacyMapping.notification), title: title))
                    } else {
                        guard legacy.isEmpty else {
                            throw LegacyMapping.Unsupported(reason: "it owns \(legacy.count) notification(s), which Ping's OATH module has no place for")
                        }
                        let credential = try LegacyMapping.oathCredential(mechanism, of: account)
                        // Locked by the migration even when a policy locked it: a policy's lock is
                        // lifted when the policy passes, the migration's is not. Its own lock comes
                        // back when the move ends.
                        var moving = credential
                        moving.lockCredential(policyName: policy)
                        oath.append(OathEntry(mechanism: mechanism, credential: credential, moving: moving, title: title))
                    }
                } catch {
                    kept.append("\(title) (\(mechanism.type.rawValue)): \(error.reason)")
                }
            }
        }
    }
}
