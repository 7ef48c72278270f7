import CofferStorage
import Foundation

/// Moves everything from one ``StorageClient`` to another, verifying before removing.
public enum StorageMigration {
    /// The start of the locking policy an account's copy in the target holds while it is being
    /// moved from a source (`coffer-migration from <source>`): it issues no code until that
    /// source has let go of the account (see ``move(from:to:sourceName:sourceLedger:targetLedger:remembered:)``).
    public static let movingPolicy = "coffer-migration"

    /// The locking policy of a copy being moved from the source named `sourceName`.
    public static func movingPolicy(from sourceName: String) -> String {
        sourceName.isEmpty ? movingPolicy : "\(movingPolicy) from \(sourceName)"
    }

    /// Whether `policy` is one a migration set (``movingPolicy(from:)``).
    public static func isMovingPolicy(_ policy: String?) -> Bool {
        guard let policy else { return false }
        return policy == movingPolicy || policy.hasPrefix(movingPolicy + " from ")
    }

    /// What a migration moved.
    public struct Report: Sendable, Equatable {
        /// Accounts moved.
        public var accounts = 0
        /// Mechanisms moved.
        public var mechanisms = 0
        /// Notifications moved.
        public var notifications = 0
        /// Whether the push device token moved (a client written to the spec keeps none).
        public var pushDeviceToken = false
        /// HOTP counters the source remembered that the target has no ledger to keep (a store of
        /// your own): a secret used before and added to the target again could issue codes its
        /// server has seen. 0 when every counter was carried.
        public var countersLeftBehind = 0

        /// A report with these counts.
        public init(accounts: Int = 0, mechanisms: Int = 0, notifications: Int = 0, pushDeviceToken: Bool = false) {
            self.accounts = accounts
            self.mechanisms = mechanisms
            self.notifications = notifications
            self.pushDeviceToken = pushDeviceToken
        }
    }

    /// Why a migration stopped.
    public enum Failure: Error, LocalizedError, Sendable {
        /// Records of the source cannot be read (a missing key, damage): nothing was copied or
        /// removed. `records` names them (the first 100), each with why.
        case unreadableSource(count: Int, records: [String])
        /// The target already holds these accounts, or objects under the same ids, that differ
        /// from the source's; nothing was removed from the source.
        case targetNotEmpty([String])
        /// Writing to the target failed.
        case writeFailed(String)
        /// What was read back from the target differs from the source.
        case verificationFailed(String)
        /// Removing from the source failed after the copy was verified: both hold the data now.
        case sourceCleanupFailed(String)
        /// The account moved, but its copy in the target could not be unlocked: it stays locked
        /// (``StorageMigration/movingPolicy``) until a migration runs again.
        case unlockFailed(String)
        /// A HOTP counter ledger (`"source"` or `"target"`) could not be read or raised: nothing
        /// was moved, since the target could then issue codes the source's server has seen.
        case counterLedgerFailed(String, cause: any Error)

        /// What went wrong, what was left where, and what to do before migrating again.
        public var errorDescription: String? {
            switch self {
            case let .unreadableSource(count, records):
                let listed = records.prefix(5).joined(separator: "; ") + (count > 5 ? "; …" : "")
                return "\(count) record(s) of the source cannot be read, so nothing was moved (moving the rest and removing "
                    + "the accounts would delete them): \(listed). Restore the key or the records first, then migrate again."
            case .targetNotEmpty(let accounts):
                return "The target already holds \(accounts.prefix(5).joined(separator: ", ")), different from the source; "
                    + "nothing was removed from the source. If a copy there is locked by an interrupted migration, run that "
                    + "migration again to finish it; otherwise compare the two and keep the one you want (a HOTP account's "
                    + "newer copy is the one with the higher counter)."
            case .writeFailed(let what): return "Could not write \(what) to the target; nothing was removed from the source."
            case .verificationFailed(let what): return "\(what) reads back differently from the target; nothing was removed from the source."
            case .sourceCleanupFailed(let what):
                return "Everything was copied and verified, but \(what) could not be removed from the source: both hold it now. "
                    + "The target's copy stays locked until the migration is run again."
            case .unlockFailed(let what):
                return "\(what) moved, but its copy could not be unlocked in the target, so it issues no codes yet; run the "
                    + "migration again to unlock it."
            case let .counterLedgerFailed(which, cause):
                return "The \(which)'s record of HOTP counters could not be used (\((cause as? LocalizedError)?.errorDescription ?? "\(cause)")), "
                    + "so nothing was moved: without it the target could issue codes the server has seen. Fix it, then migrate again."
            }
        }
    }

    /// Copies every account, mechanism and notification, and the push device token, from
    /// `source` to `target`, reads them all back from `target` and compares, and only then
    /// removes them from `source`. The same as ``move(from:to:sourceName:sourceLedger:targetLedger:remembered:)`` with no name: give
    /// one whenever several stores may move into the same target.
    public static func move(from source: any StorageClient, to target: any StorageClient) throws(Failure) -> Report {
        try move(from: source, to: target, sourceName: "")
    }

    /// Copies every account, mechanism and notification, and the push device token, from
    /// `source` to `target`, reads them all back from `target` and compares, and only then
    /// removes them from `source`. `sourceName` names the source store, the same each time
    /// (`coffer` uses its backend and location): it is recorded in the lock of the copies while
    /// they move, so that only a later migration from the same store unlocks copies an
    /// interrupted one left locked.
    ///
    /// - Nothing happens when any record of `source` cannot be read: its client's
    ///   ``StorageClientDiagnostics/unreadableRecordCount`` grows while everything is read, and
    ///   the migration throws ``Failure/unreadableSource(count:records:)``. (A client written
    ///   to the spec reports no unreadable records; its reads are taken as complete.)
    /// - Objects the target already holds and that equal the source's are accepted, so a
    ///   migration that was interrupted (even killed) can be run again and completes. A
    ///   mechanism that differs only in its HOTP counter is accepted too, and both stores move
    ///   on to the higher counter (a counter is never lowered: codes issued from either store
    ///   are never issued again). An object under the same id that differs otherwise is
    ///   refused: nothing is overwritten.
    /// - The source loses only what was copied and verified, removed by id: the push device
    ///   token, notifications,
    ///   then mechanisms, then an account once it owns nothing more. Nothing is removed by
    ///   cascade.
    /// - No HOTP code is issued twice, even by a process that uses the target while the move runs:
    ///   the target's copy of an account is locked (``movingPolicy``) from before its first
    ///   mechanism is written until the source has removed the account, and a mechanism leaves
    ///   the source only if its counter is unchanged (else the target's counter is raised to the
    ///   source's first). Until then, codes come from the source. A copy left locked by a
    ///   migration from the same source that was cut short after the source let go is unlocked
    ///   by the next one; copies being moved from another source are left alone.
    ///
    /// HOTP counters follow the accounts: what the source's ledger remembers (secrets removed
    /// from it), the counters of every mechanism moved, and `remembered` (what else the source
    /// keeps, such as its trash) are raised in the target's ledger before anything is copied;
    /// and a mechanism whose secret the target's ledger remembers at a higher counter is copied
    /// with that counter. The ledgers default to the clients themselves when they keep one
    /// (``KeychainStorageClient``, PostgreSQL's client); the SQLite store's is a file beside it
    /// (``SealedCounterLedgerFile``), given here. A target without a ledger keeps nothing:
    /// ``Report/countersLeftBehind`` says how many counters stayed behind.
    public static func move(
        from source: any StorageClient, to target: any StorageClient, sourceName: String,
        sourceLedger: (any HOTPCounterLedger)? = nil, targetLedger: (any HOTPCounterLedger)? = nil, remembered: [Mechanism] = []
    ) throws(Failure) -> Report {
        let diagnostics = source as? any StorageClientDiagnostics
        let unreadableBefore = diagnostics?.unreadableRecordCount ?? 0
        let plan = source.getAllAccounts().map { account in
            (account, source.getMechanismsForAccount(account: account).map { ($0, source.getAllNotificationsForMechanism(mechanism: $0)) })
        }
        if let diagnostics, diagnostics.unreadableRecordCount > unreadableBefore {
            throw .unreadableSource(count: diagnostics.unreadableRecordCount - unreadableBefore,
                                    records: Array(diagnostics.unreadableRecords.suffix(diagnostics.unreadableRecordCount - unreadableBefore)))
        }

        // The counters first: a migration killed after this leaves the target knowing them.
        let targetLedger = targetLedger ?? target as? any HOTPCounterLedger
        let moved = HOTPCounters.of(plan.flatMap { $0.1.map(\.0) })
        let carried: [String: UInt64], known: [String: UInt64]
        do {
            let sourceCounters = try (sourceLedger ?? source as? any HOTPCounterLedger)?.rememberedCountersBlocking() ?? [:]
            carried = sourceCounters.raised(by: HOTPCounters.of(remembered)).raised(by: moved)
        } catch {
            throw .counterLedgerFailed("source", cause: error)
        }
        do {
            try targetLedger?.rememberBlocking(carried)
            known = try targetLedger?.rememberedCountersBlocking() ?? [:]
        } catch {
            throw .counterLedgerFailed("target", cause: error)
        }

        // Accounts an earlier migration from this same source moved but could not unlock (the
        // source no longer holds them): that move is over, so they may issue codes again.
        let policy = movingPolicy(from: sourceName)
        let moving = Set(plan.map { $0.0.identifier })
        for stuck in target.getAllAccounts() where stuck.lockingPolicy == policy && !moving.contains(stuck.identifier) {
            try unlockMoved(stuck, in: target, policy: policy)
        }

        let token = source.getPushDeviceToken()
        if let token {
            if let existing = target.getPushDeviceToken() {
                guard existing == token else { throw .targetNotEmpty(["the push device token"]) }
            } else if !target.setPushDeviceToken(token) {
                throw .writeFailed("the push device token")
            }
        }
        // Mechanisms the target held already (an interrupted migration): their counter there may
        // be ahead of the source's. Every other copy must read back exactly as given.
        var resumed: Set<String> = []
        for (account, mechanisms) in plan {
            let title = "\(account.issuer): \(account.accountName)"
            // The target's copy issues no code before the source lets go of the account.
            let guarded = lockedForMove(account, policy: policy)
            if let existing = target.getAccount(accountIdentifier: account.identifier) {
                guard existing == account || existing == guarded else { throw .targetNotEmpty([title]) }
                if existing != guarded {
                    do {
                        try target.updateAccount(accountIdentifier: account.identifier) { $0 = guarded }
                    } catch {
                        throw .writeFailed("the account \(title) (\((error as? LocalizedError)?.errorDescription ?? "\(error)"))")
                    }
                }
            } else if !target.setAccount(account: guarded) {
                throw .writeFailed("the account \(title)")
            }
            for (mechanism, notifications) in mechanisms {
                if let existing = target.getMechanismForUUID(uuid: mechanism.mechanismUUID) {
                    guard existing.isSame(as: mechanism) else { throw .targetNotEmpty(["\(title) (\(mechanism.type.rawValue), id \(mechanism.mechanismUUID))"]) }
                    try raiseCounter(of: mechanism.mechanismUUID, to: mechanism.counter, in: target, title: title)
                    resumed.insert(mechanism.mechanismUUID)
                } else {
                    // A secret the target used before goes on from where it left off there.
                    var placed = mechanism
                    placed.counter = max(mechanism.counter, HOTPCounters.floor(for: mechanism, in: known))
                    if placed.counter != mechanism.counter { resumed.insert(mechanism.mechanismUUID) }
                    do {
                        try target.insertMechanism(placed)
                    } catch {
                        throw .writeFailed("a mechanism of \(title) (\((error as? LocalizedError)?.errorDescription ?? "\(error)"))")
                    }
                }
                for notification in notifications {
                    if let existing = target.getNotification(messageId: notification.messageId, mechanism: mechanism) {
                        guard existing == notification else { throw .targetNotEmpty(["a notification of \(title)"]) }
                    } else if !target.setNotification(notification: notification) {
                        throw .writeFailed("a notification of \(title)")
                    }
                }
            }
        }

        if let token, target.getPushDeviceToken() != token {
            throw .verificationFailed("The push device token")
        }
        for (account, mechanisms) in plan {
            guard target.getAccount(accountIdentifier: account.identifier) == lockedForMove(account, policy: policy) else {
                throw .verificationFailed("The account \(account.issuer): \(account.accountName)")
            }
            for (mechanism, notifications) in mechanisms {
                guard let copied = target.getMechanismForUUID(uuid: mechanism.mechanismUUID),
                      resumed.contains(mechanism.mechanismUUID) ? copied.isSame(as: mechanism) && copied.counter >= mechanism.counter
                                                                 : copied == mechanism,
                      Set(target.getAllNotificationsForMechanism(mechanism: mechanism).map(\.identifier)) == Set(notifications.map(\.identifier)) else {
                    throw .verificationFailed("A mechanism of \(account.issuer): \(account.accountName)")
                }
            }
        }

        var report = Report()
        // Without a ledger in the target, only the moved mechanisms carry their counters.
        if targetLedger == nil { report.countersLeftBehind = carried.keys.filter { moved[$0] == nil }.count }
        if token != nil {
            guard source.removePushDeviceToken() else { throw .sourceCleanupFailed("the push device token") }
            report.pushDeviceToken = true
        }
        for (account, mechanisms) in plan {
            let title = "\(account.issuer): \(account.accountName)"
            for (mechanism, notifications) in mechanisms {
                for notification in notifications where !source.removeNotification(notification: notification) {
                    throw .sourceCleanupFailed("a notification of \(title)")
                }
                try removeCarryingCounter(mechanism, from: source, to: target, title: title)
                report.mechanisms += 1
                report.notifications += notifications.count
            }
            // Only an account that owns nothing more; the built-in clients also refuse to remove
            // one that still owns records, readable or not.
            if source.getAccount(accountIdentifier: account.identifier) != nil {
                guard source.getMechanismsForAccount(account: account).isEmpty, source.removeAccount(account: account) else {
                    throw .sourceCleanupFailed("the account \(title)")
                }
            }
            try unlockMoved(account, in: target, policy: policy)
            report.accounts += 1
        }
        return report
    }

    /// Removes the copied mechanism from the source only if no HOTP code was issued from it
    /// since it was read (an atomic step of the source); when one was, the target's counter is
    /// raised to the source's first and the removal tried again. So no code issued during the
    /// migration is issued again from the target.
    private static func removeCarryingCounter(_ copied: Mechanism, from source: any StorageClient, to target: any StorageClient,
                                              title: String) throws(Failure) {
        var expected = copied
        for _ in 0..<100 {
            do {
                if try source.removeMechanismIfUnchanged(expected) { return }
            } catch {
                throw .sourceCleanupFailed("a mechanism of \(title) (\((error as? LocalizedError)?.errorDescription ?? "\(error)"))")
            }
            guard let current = source.getMechanismForUUID(uuid: expected.mechanismUUID), current.counter > expected.counter else {
                throw .sourceCleanupFailed("a mechanism of \(title) (its HOTP counter moved and could not be read again)")
            }
            try raiseCounter(of: current.mechanismUUID, to: current.counter, in: target, title: title)
            expected = current
        }
        throw .sourceCleanupFailed("a mechanism of \(title) (codes kept being issued from it during the migration)")
    }

    /// `account` as its copy in the target is while it moves: locked under `policy` (the moving
    /// policy of its source), unless it is locked already (under its own policy, which it keeps).
    private static func lockedForMove(_ account: Account, policy: String) -> Account {
        guard !account.isLocked else { return account }
        var locked = account
        locked.isLocked = true
        locked.lockingPolicy = policy
        return locked
    }

    /// Unlocks the target's copy of `account` if this move locked it (a lock set since, under
    /// another policy, is kept).
    private static func unlockMoved(_ account: Account, in target: any StorageClient, policy: String) throws(Failure) {
        do {
            try target.updateAccount(accountIdentifier: account.identifier) { copy in
                guard copy.lockingPolicy == policy else { return }
                copy.isLocked = false
                copy.lockingPolicy = nil
            }
        } catch {
            throw .unlockFailed("The account \(account.issuer): \(account.accountName)")
        }
    }

    /// Moves the target's HOTP counter up to at least `counter`, one atomic advance at a time,
    /// so it never goes down, whatever else uses the target meanwhile.
    private static func raiseCounter(of uuid: String, to counter: UInt64, in target: any StorageClient, title: String) throws(Failure) {
        do {
            while true {
                guard let current = target.getMechanismForUUID(uuid: uuid) else { throw StorageClientError.mechanismNotFound(uuid: uuid) }
                if current.counter >= counter { return }
                _ = try target.advanceCounter(mechanismUUID: uuid)
            }
        } catch {
            throw .writeFailed("the HOTP counter of \(title) (\((error as? LocalizedError)?.errorDescription ?? "\(error)"))")
        }
    }
}

extension Mechanism {
    /// Whether `other` is this mechanism but perhaps for its HOTP counter.
    func isSame(as other: Mechanism) -> Bool {
        var aligned = self
        aligned.counter = other.counter
        return aligned == other
    }
}
