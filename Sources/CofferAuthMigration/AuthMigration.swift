import CofferAuthenticator
import CofferMFACommons
import CofferOath
import CofferPush
import CofferStorage
import Foundation

/// Moves what a legacy ForgeRock `StorageClient` holds into Ping's current storages, an
/// `OathStorage` and a `PushStorage`, in one call: ``move(from:oath:push:sourceName:sourceLedger:remembered:)``.
///
/// Ping's own migration (Android's `auth-migration`, reference §7.4) deletes the legacy data
/// once the copy loop ends, whatever failed; drops notifications and the device token; gives
/// OATH credentials new ids, so a second run doubles them; and can replay HOTP counters. This
/// one, point by point:
/// - **Nothing is deleted that was not copied and read back.** The source loses a record only
///   after everything was written to the targets and read back equal; a mechanism the targets
///   cannot hold (a Steam account, an algorithm Ping's module lacks) stays in the source, named in
///   the report, with its account.
/// - **Notifications and the device token are carried**, not dropped.
/// - **HOTP counters are carried and never replayed**: while an account moves, its OATH copy is
///   locked (`coffer-migration from <source>`, which policies do not lift), so it issues no code;
///   a mechanism leaves the source only if its counter did not move since it was copied (else
///   the copy's counter is raised first); then the copy is unlocked. A counter is never lowered.
///   The counters the source remembers of secrets it no longer holds (its `HOTPCounterLedger`,
///   and those of what a trash keeps) are carried into the OATH storage's ledger first, so a
///   secret removed before the move and added again after it still goes on from its counter.
/// - **Ids are kept** (a credential's id is its mechanism's UUID, a notification's its legacy
///   identifier), so a re-run finds its own copies and neither doubles nor overwrites them.
/// - **Killed at any point and run again**, it completes: copies it made are accepted, copies it
///   had not made are made, and what the source had already let go of is unlocked.
///
/// ```swift
/// let report = try await AuthMigration.move(from: legacyClient, oath: oathStorage, push: pushStorage)
/// print("\(report.oathCredentials) OATH and \(report.pushCredentials) push credentials moved")
/// ```
public enum AuthMigration {
    /// What a migration did.
    public struct Report: Sendable, Equatable {
        /// OATH credentials moved (copied, verified, removed from the source).
        public var oathCredentials = 0
        /// Push credentials moved.
        public var pushCredentials = 0
        /// Notifications moved.
        public var notifications = 0
        /// Whether the push device token moved.
        public var pushDeviceToken = false
        /// Mechanisms the targets cannot hold, each with why: they stay in the source, with their accounts.
        public var keptInSource: [String] = []

        /// A report with these counts.
        public init(oathCredentials: Int = 0, pushCredentials: Int = 0, notifications: Int = 0, pushDeviceToken: Bool = false,
                    keptInSource: [String] = []) {
            self.oathCredentials = oathCredentials
            self.pushCredentials = pushCredentials
            self.notifications = notifications
            self.pushDeviceToken = pushDeviceToken
            self.keptInSource = keptInSource
        }
    }

    /// Why a migration stopped. In every case nothing the targets do not hold verified was
    /// removed from the source; run the migration again once the cause is fixed.
    public enum Failure: Error, LocalizedError, Sendable {
        /// Records of the source cannot be read (a missing key, damage): nothing was copied or removed.
        case unreadableSource(count: Int, records: [String])
        /// A target holds a different record under an id the migration needs; nothing was overwritten.
        case targetConflict(String)
        /// Writing to or reading from a target failed.
        case targetFailed(String)
        /// What was read back from a target differs from what was written.
        case verificationFailed(String)
        /// Removing a copied record from the source failed: both hold it now, the copy still locked.
        case sourceCleanupFailed(String)

        /// What went wrong, what was left where, and what to do.
        public var errorDescription: String? {
            switch self {
            case let .unreadableSource(count, records):
                return "\(count) record(s) of the legacy storage cannot be read, so nothing was moved: "
                    + records.prefix(5).joined(separator: "; ") + (count > 5 ? "; …" : "") + ". Restore the key or the records, then migrate again."
            case .targetConflict(let what):
                return "\(what); nothing was overwritten and nothing removed from the legacy storage. Remove or rename one of the two, then migrate again."
            case .targetFailed(let what):
                return "\(what); nothing was removed from the legacy storage. Fix the new storage, then migrate again."
            case .verificationFailed(let what):
                return "\(what) reads back differently from the new storage; nothing was removed from the legacy storage."
            case .sourceCleanupFailed(let what):
                return "Everything was copied and verified, but \(what) could not be removed from the legacy storage: both hold it, "
                    + "the copy locked. Migrate again to finish."
            }
        }
    }

    /// The locking policy of copies moving from the source named `sourceName`.
    public static func movingPolicy(from sourceName: String) -> String {
        StorageMigration.movingPolicy(from: sourceName)
    }

    /// Moves every account's mechanisms, their notifications and the push device token from
    /// `source` into `oath` (TOTP and HOTP) and `push` (push), as the type's documentation
    /// describes. `sourceName` names the source store (`"keychain"`, a file's path), the same
    /// each time and different for each store that may move into the same targets: it is in the
    /// lock of the copies while they move, so that a run finishes only what an earlier run from
    /// the same store left, never a move from another store still in flight.
    ///
    /// Stop using the legacy client for codes while it runs: a code it issues meanwhile is
    /// carried (the counter is raised), but only the migration's own reads see it.
    ///
    /// - Parameters:
    ///   - source: The legacy store.
    ///   - oath: Where TOTP and HOTP credentials go.
    ///   - push: Where push credentials, notifications and the device token go.
    ///   - sourceName: Names the source store, the same on every run (see above).
    ///   - sourceLedger: The source's HOTP counter memory when it is not the source itself (the
    ///     `SealedCounterLedgerFile` beside a `SQLiteStorageClient`). Carried into `oath` when it
    ///     keeps a ledger (every storage Coffer ships does).
    ///   - remembered: The mechanisms a trash of the source keeps, whose counters are carried too.
    public static func move(from source: any StorageClient, oath: any OathStorage, push: any PushStorage,
                            sourceName: String, sourceLedger: (any HOTPCounterLedger)? = nil,
                            remembered: [Mechanism] = []) async throws(Failure) -> Report {
        let policy = movingPolicy(from: sourceName)
        let plan = try MigrationPlan(reading: source, policy: policy)
        try await carryCounters(from: sourceLedger ?? source as? any HOTPCounterLedger,
                                of: plan.oath.map(\.mechanism) + remembered, into: oath as? any HOTPCounterLedger)
        var report = Report(keptInSource: plan.kept)
        let targets = MigrationTargets(oath: oath, push: push, policy: policy)

        try await targets.unlockLeftBehind(except: Set(plan.oath.map(\.credential.id)))
        let tokenCopied = if let token = plan.token { try await targets.copy(token) } else { false }
        if plan.token != nil, !tokenCopied {
            report.keptInSource.append("the push device token: the new storage has another current one (registered since)")
        }
        for entry in plan.oath { try await targets.copy(entry.credential, moving: entry.moving) }
        for entry in plan.push {
            try await targets.copy(entry.credential)
            for notification in entry.notifications { try await targets.copy(notification) }
        }
        try await targets.verify(plan, tokenCopied: tokenCopied)

        // Only now does the source let go, record by record, by id.
        // The token only if it is still the one copied (one registered meanwhile stays).
        if let token = plan.token, tokenCopied, source.getPushDeviceToken()?.tokenId == token.token {
            guard source.removePushDeviceToken() || source.getPushDeviceToken() == nil else {
                throw .sourceCleanupFailed("the push device token")
            }
            report.pushDeviceToken = true
        }
        for entry in plan.push {
            for legacy in entry.legacyNotifications where !source.removeNotification(notification: legacy) {
                guard source.getNotification(messageId: legacy.messageId, mechanism: entry.mechanism) == nil else {
                    throw .sourceCleanupFailed("a notification of \(entry.title)")
                }
            }
            try remove(entry.mechanism, from: source, title: entry.title)
            report.pushCredentials += 1
            report.notifications += entry.notifications.count
        }
        for entry in plan.oath {
            try await removeCarryingCounter(entry.mechanism, from: source, into: targets, title: entry.title)
            try await targets.unlock(entry.credential.id, to: entry.credential)
            report.oathCredentials += 1
        }
        for account in plan.accounts where source.getAccount(accountIdentifier: account.identifier) != nil {
            // Only an account that owns nothing more (what the targets cannot hold keeps it).
            guard source.getMechanismsForAccount(account: account).isEmpty else { continue }
            guard source.removeAccount(account: account) else { throw .sourceCleanupFailed("the account \(account.issuer): \(account.accountName)") }
        }
        return report
    }

    /// Raises the target's counter memory by the source's and by the counters of `mechanisms`,
    /// before anything is copied: a migration killed after this leaves the target knowing them.
    private static func carryCounters(from source: (any HOTPCounterLedger)?, of mechanisms: [Mechanism],
                                      into target: (any HOTPCounterLedger)?) async throws(Failure) {
        guard let target else { return }
        let carried: [String: UInt64]
        do {
            carried = try await (source?.rememberedCounters() ?? [:]).raised(by: HOTPCounters.of(mechanisms))
        } catch {
            throw .unreadableSource(count: 1, records: ["the record of HOTP counters (\((error as? LocalizedError)?.errorDescription ?? "\(error)"))"])
        }
        do {
            try await target.remember(carried)
        } catch {
            throw .targetFailed("The HOTP counters could not be recorded in the new storage (\((error as? LocalizedError)?.errorDescription ?? "\(error)"))")
        }
    }

    /// Removes a copied OATH mechanism from the source only if its counter did not move since it
    /// was read (an atomic step of the built-in clients); when it moved, the copy's counter is
    /// raised to the source's and the removal tried again.
    private static func removeCarryingCounter(_ copied: Mechanism, from source: any StorageClient, into targets: MigrationTargets,
                                              title: String) async throws(Failure) {
        var expected = copied
        for _ in 0..<100 {
            do {
                if try source.removeMechanismIfUnchanged(expected) { return }
            } catch StorageClientError.mechanismNotFound {
                return  // an earlier run removed it after copying it
            } catch {
                throw .sourceCleanupFailed("the mechanism of \(title) (\((error as? LocalizedError)?.errorDescription ?? "\(error)"))")
            }
            guard let current = source.getMechanismForUUID(uuid: expected.mechanismUUID), current.counter > expected.counter,
                  let counter = Int(exactly: current.counter) else {
                throw .sourceCleanupFailed("the mechanism of \(title) (its HOTP counter moved and could not be read again)")
            }
            try await targets.raiseCounter(of: current.mechanismUUID, to: counter)
            expected = current
        }
        throw .sourceCleanupFailed("the mechanism of \(title) (codes kept being issued from it during the migration)")
    }

    /// Removes a push mechanism (its notifications already gone) from the source.
    private static func remove(_ mechanism: Mechanism, from source: any StorageClient, title: String) throws(Failure) {
        guard source.removeMechanism(mechanism: mechanism) || source.getMechanismForUUID(uuid: mechanism.mechanismUUID) == nil else {
            throw .sourceCleanupFailed("the push mechanism of \(title)")
        }
    }
}
