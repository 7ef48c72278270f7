import CofferOath
import CofferPush
import Foundation

/// The new storages as a migration writes them: every write accepts the migration's own
/// earlier copy (a re-run), refuses to overwrite anything else, and never lowers a counter.
struct MigrationTargets {
    let oath: any OathStorage
    let push: any PushStorage
    /// The lock moving copies carry.
    let policy: String

    /// Unlocks copies an earlier run from the same source locked and the source has since let go
    /// of (that run was cut short between the two).
    func unlockLeftBehind(except moving: Set<String>) async throws(AuthMigration.Failure) {
        let stored = try await attempt("read the OATH credentials") { try await oath.getAllOathCredentials() }
        for credential in stored where credential.isLocked && credential.lockingPolicy == policy && !moving.contains(credential.id) {
            try await unlock(credential.id)
        }
    }

    /// Stores the token unless the new storage has a current one; returns whether the legacy
    /// token is there now (another current one means the app registered anew: the legacy token
    /// stays where it is).
    func copy(_ token: PushDeviceToken) async throws(AuthMigration.Failure) -> Bool {
        if let current = try await attempt("read the push device token", { try await push.getCurrentPushDeviceToken() }) {
            return current.token == token.token
        }
        try await attempt("store the push device token") { try await push.storePushDeviceToken(token) }
        return true
    }

    /// Stores `moving` (the locked copy), or accepts the stored copy of an earlier run, raising
    /// its counter to the source's and locking it again.
    func copy(_ credential: OathCredential, moving: OathCredential) async throws(AuthMigration.Failure) {
        guard let existing = try await attempt("read an OATH credential", { try await oath.retrieveOathCredential(credentialId: credential.id) }) else {
            try await attempt("store the OATH credential of \(credential.issuer): \(credential.accountName)") { try await oath.storeOathCredential(moving) }
            return
        }
        guard LegacyMapping.same(existing, credential) else {
            throw .targetConflict("The new OATH storage holds a different credential under the id of \(credential.issuer): \(credential.accountName)")
        }
        try await raiseCounter(of: credential.id, to: credential.counter)
        if !(existing.isLocked && existing.lockingPolicy == policy) {
            let policy = policy
            try await update(credential.id, "lock the OATH credential of \(credential.issuer): \(credential.accountName)") { current in
                var locked = current
                locked.lockCredential(policyName: policy)
                return locked
            }
        }
    }

    func copy(_ credential: PushCredential) async throws(AuthMigration.Failure) {
        guard let existing = try await attempt("read a push credential", { try await push.retrievePushCredential(credentialId: credential.id) }) else {
            try await attempt("store the push credential of \(credential.issuer): \(credential.accountName)") { try await push.storePushCredential(credential) }
            return
        }
        guard LegacyMapping.same(existing, credential) else {
            throw .targetConflict("The new push storage holds a different credential under the id of \(credential.issuer): \(credential.accountName)")
        }
    }

    func copy(_ notification: PushNotification) async throws(AuthMigration.Failure) {
        guard let existing = try await attempt("read a notification", { try await push.retrievePushNotification(notificationId: notification.id) }) else {
            try await attempt("store a notification") { try await push.storePushNotification(notification) }
            return
        }
        guard LegacyMapping.same(existing, notification) else {
            throw .targetConflict("The new push storage holds a different notification under the id of message \(notification.messageId)")
        }
    }

    /// Reads everything back: every copy equal to what was written (an OATH counter at least the
    /// source's, locked while it moves), every notification there, the token current.
    func verify(_ plan: MigrationPlan, tokenCopied: Bool) async throws(AuthMigration.Failure) {
        if let token = plan.token, tokenCopied {
            let current = try await attempt("read the push device token") { try await push.getCurrentPushDeviceToken() }
            guard current?.token == token.token else { throw .verificationFailed("The push device token") }
        }
        for entry in plan.oath {
            let stored = try await attempt("read an OATH credential") { try await oath.retrieveOathCredential(credentialId: entry.credential.id) }
            guard let stored, LegacyMapping.same(stored, entry.credential), stored.counter >= entry.credential.counter,
                  stored.isLocked == entry.moving.isLocked else {
                throw .verificationFailed("The OATH credential of \(entry.title)")
            }
        }
        for entry in plan.push {
            let stored = try await attempt("read a push credential") { try await push.retrievePushCredential(credentialId: entry.credential.id) }
            guard let stored, LegacyMapping.same(stored, entry.credential) else { throw .verificationFailed("The push credential of \(entry.title)") }
            for notification in entry.notifications {
                let copy = try await attempt("read a notification") { try await push.retrievePushNotification(notificationId: notification.id) }
                guard let copy, LegacyMapping.same(copy, notification) else { throw .verificationFailed("A notification of \(entry.title)") }
            }
        }
    }

    /// Moves the copy's counter up to at least `counter`, never down, in one atomic update when
    /// the storage can.
    func raiseCounter(of id: String, to counter: Int) async throws(AuthMigration.Failure) {
        try await update(id, "raise a HOTP counter") { current in
            guard current.counter < counter else { return nil }
            var raised = current
            raised.counter = counter
            return raised
        }
    }

    /// Takes this migration's lock off the copy, giving it back the lock state it had in the
    /// source (`original`; unlocked when not known); a lock set since by a policy stays.
    func unlock(_ id: String, to original: OathCredential? = nil) async throws(AuthMigration.Failure) {
        let policy = policy, originalLock = original.flatMap { $0.isLocked ? ($0.lockingPolicy ?? "unknown") : nil }
        try await update(id, "unlock an OATH credential") { current in
            guard current.isLocked, current.lockingPolicy == policy else { return nil }
            var unlocked = current
            if let originalLock { unlocked.lockCredential(policyName: originalLock) } else { unlocked.unlockCredential() }
            return unlocked
        }
    }

    /// Changes the stored copy atomically when the storage can (nothing another writer did in
    /// between is undone), else by reading and storing; `nil` when there is no copy.
    @discardableResult
    private func update(_ id: String, _ what: String, _ change: @escaping @Sendable (OathCredential) -> OathCredential?) async throws(AuthMigration.Failure) -> OathCredential? {
        if let counting = oath as? any OathCounterStorage {
            return try await attempt(what) {
                try await counting.updateOathCredential(credentialId: id) { current in change(current) ?? current }
            }
        }
        guard let stored = try await attempt("read an OATH credential", { try await oath.retrieveOathCredential(credentialId: id) }),
              let next = change(stored) else { return nil }
        try await attempt(what) { try await oath.storeOathCredential(next) }
        return stored
    }

    /// Runs a storage call, its error a ``AuthMigration/Failure/targetFailed(_:)`` naming what
    /// was being done.
    @discardableResult
    private func attempt<R>(_ what: String, _ body: () async throws -> R) async throws(AuthMigration.Failure) -> R {
        do {
            return try await body()
        } catch {
            throw .targetFailed("Could not \(what) (\((error as? LocalizedError)?.errorDescription ?? "\(error)"))")
        }
    }
}
