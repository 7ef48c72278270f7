import CofferMFACommons
import CofferStorage
import Foundation

/// What ``OathClient`` does, in one actor: the storage, the optional credential cache, policy
/// lock state and codes.
///
/// Better than Ping's: a HOTP counter is advanced in one atomic step of the storage when it
/// offers one (``OathCounterStorage``: every Coffer storage, across processes), and otherwise
/// under a per-credential lock of this client, so two requests never get the same code. And a
/// HOTP counter never goes back: with a storage that keeps a `HOTPCounterLedger`, a credential's
/// counter is recorded before it is removed and a credential stored again with the same secret
/// starts from it (``OathCounterMemory``).
actor OathService {
    let storage: any OathStorage
    private let evaluator: MfaPolicyEvaluator
    private let logger: any CofferMFACommons.Logger
    private let cacheEnabled: Bool
    private var cache: [String: OathCredential] = [:]
    private var counterLocks: [String: AsyncLock] = [:]
    private let memory: OathCounterMemory?

    init(storage: any OathStorage, evaluator: MfaPolicyEvaluator, logger: any CofferMFACommons.Logger, cacheEnabled: Bool) {
        self.storage = storage
        self.evaluator = evaluator
        self.logger = logger
        self.cacheEnabled = cacheEnabled
        self.memory = (storage as? any HOTPCounterLedger).map(OathCounterMemory.init)
    }

    func add(uri: String) async throws -> OathCredential {
        try await add(try OathUriParser.parse(uri))
    }

    /// Checks a parsed credential's policies (a failing one refuses it) and stores it.
    func add(_ credential: OathCredential) async throws -> OathCredential {
        let result = await evaluator.evaluate(credentialPolicies: credential.policies)
        if result.isFailure {
            throw OathError.policyViolation("This credential violates the policy '\(result.nonCompliancePolicyName ?? "unknown")'", credential.id)
        }
        return try await save(credential)
    }

    func save(_ credential: OathCredential) async throws -> OathCredential {
        try credential.validate()
        let checked = await applyingPolicies(credential)
        if let memory, checked.oathType == .hotp {
            return try await saveRaisingCounter(checked, memory: memory)
        }
        if let memory {
            // A TOTP saved over a HOTP credential: the HOTP counter is remembered first.
            let stored = try await storage.retrieveOathCredential(credentialId: checked.id)
            try Self.refuseHeld(stored)
            if let stored { try await memory.remember(stored) }
        }
        try await storage.storeOathCredential(checked)
        remember(checked)
        return checked
    }

    /// Stores a HOTP credential with its counter raised to the highest its secret was used
    /// with. Over a stored credential with the same id and secret, in one atomic step of the
    /// storage when it offers one, so a code another process issues meanwhile is not undone.
    private func saveRaisingCounter(_ credential: OathCredential, memory: OathCounterMemory) async throws -> OathCredential {
        let stored = try await storage.retrieveOathCredential(credentialId: credential.id)
        try Self.refuseHeld(stored)
        try await refuseSecretHeldElsewhere(credential)
        let raised = try await memory.raising(credential, over: stored)
        if let counters = storage as? any OathCounterStorage, let stored, stored.secret == raised.secret {
            let before = try await counters.updateOathCredential(credentialId: raised.id) { current in
                try Self.refuseHeld(current)
                var next = raised
                if current.oathType == .hotp { next.counter = max(raised.counter, current.counter) }
                return next
            }
            if let before {
                var saved = raised
                if before.oathType == .hotp { saved.counter = max(raised.counter, before.counter) }
                remember(saved)
                return saved
            }
        }
        // Another secret (or no atomic update) over a stored HOTP credential: its counter first.
        if let stored { try await memory.remember(stored) }
        try await storage.storeOathCredential(raised)
        remember(raised)
        return raised
    }

    /// Refuses to change a credential that is being removed (held by ``OathCounterMemory/removalHold``):
    /// a save or a lock lifted then would let a code be issued after its counter was recorded.
    private static func refuseHeld(_ credential: OathCredential?) throws {
        guard let credential, credential.isHeldForRemoval else { return }
        throw OathError.credentialLocked(credential.id)
    }

    /// Refuses a HOTP secret another credential holds: two credentials with one HOTP secret
    /// would each issue the same codes (the rule the legacy client keeps too).
    private func refuseSecretHeldElsewhere(_ credential: OathCredential) async throws {
        guard let identity = credential.keyIdentity else { return }
        for other in try await storage.getAllOathCredentials()
        where other.id != credential.id && other.oathType == .hotp && other.keyIdentity == identity {
            throw OathError.duplicateCredential(other.id)
        }
    }

    func credentials() async throws -> [OathCredential] {
        var result: [OathCredential] = []
        for credential in try await storage.getAllOathCredentials() {
            var checked = await applyingPolicies(credential)
            if checked.isLocked != credential.isLocked || checked.lockingPolicy != credential.lockingPolicy {
                checked = try await storeLockState(of: checked)
            }
            remember(checked)
            result.append(checked)
        }
        return result
    }

    func credential(_ id: String) async throws -> OathCredential? {
        if cacheEnabled, let cached = cache[id] { return cached }
        let credential = try await storage.retrieveOathCredential(credentialId: id)
        if let credential { remember(credential) }
        return credential
    }

    func delete(_ id: String) async throws -> Bool {
        defer { cache[id] = nil }
        guard let memory else { return try await storage.removeOathCredential(credentialId: id) }
        guard let counters = storage as? any OathCounterStorage else {
            // No atomic update: the read, the record and the removal under this client's lock.
            let lock = counterLock(id)
            await lock.lock()
            defer { lock.unlock() }
            if let last = try await storage.retrieveOathCredential(credentialId: id) { try await memory.remember(last) }
            return try await storage.removeOathCredential(credentialId: id)
        }
        // Hold it still first: a held (locked) credential issues no code, in any process, so the
        // counter recorded is the last one used.
        let hold = OathCounterMemory.removalHold
        let last = try await counters.updateOathCredential(credentialId: id) { current in
            guard current.oathType == .hotp else { return current }
            var held = current
            held.lockCredential(policyName: hold)
            return held
        }
        guard let last else { return try await storage.removeOathCredential(credentialId: id) }
        do {
            try await memory.remember(last)
            return try await storage.removeOathCredential(credentialId: id)
        } catch {
            await release(id, held: last, counters: counters)
            throw error
        }
    }

    /// Lifts the removal's hold after the removal failed, so the credential issues codes again.
    private func release(_ id: String, held last: OathCredential, counters: any OathCounterStorage) async {
        guard last.oathType == .hotp, !last.isHeldForRemoval else { return }
        do {
            _ = try await counters.updateOathCredential(credentialId: id) { current in
                guard current.isHeldForRemoval else { return current }
                var released = current  // the lock it had before the hold, if any
                if last.isLocked { released.lockCredential(policyName: last.lockingPolicy ?? "unknown") } else { released.unlockCredential() }
                return released
            }
        } catch {
            logger.e("Credential \(id) stays locked: its removal failed and the lock could not be lifted", error: error)
        }
    }

    private func counterLock(_ id: String) -> AsyncLock {
        let lock = counterLocks[id] ?? AsyncLock()
        counterLocks[id] = lock
        return lock
    }

    func code(_ id: String) async throws -> OathCodeInfo {
        guard let known = try await credential(id) else { throw OathError.credentialNotFound(id) }
        guard !known.isLocked else { throw OathError.credentialLocked(id) }
        guard known.oathType == .hotp else { return try known.code() }
        if let counters = storage as? any OathCounterStorage {
            let used = try await counters.advanceOathCounter(credentialId: id) { stored in
                guard !stored.isLocked else { throw OathError.credentialLocked(id) }
                guard stored.oathType == .hotp else { throw OathError.codeGenerationFailed("the credential is no longer HOTP") }
                _ = try stored.code()
            }
            guard let used else { cache[id] = nil; throw OathError.credentialNotFound(id) }
            remember(try used.advanced())
            return try used.code()
        }
        let lock = counterLock(id)
        await lock.lock()
        defer { lock.unlock() }
        guard let current = try await storage.retrieveOathCredential(credentialId: id) else { throw OathError.credentialNotFound(id) }
        guard !current.isLocked else { throw OathError.credentialLocked(id) }
        let code = try current.code()
        let next = try current.advanced()
        try await storage.storeOathCredential(next)
        remember(next)
        return code
    }

    func close() {
        cache.removeAll()
    }

    /// Stores the lock state `changed` has. On a storage that updates atomically, only the lock
    /// changes: a counter another process moved since the listing stays where it is (storing the
    /// whole credential as listed would move it back, and a code would be issued twice).
    private func storeLockState(of changed: OathCredential) async throws -> OathCredential {
        guard let counters = storage as? any OathCounterStorage else {
            try await storage.storeOathCredential(changed)
            return changed
        }
        let (isLocked, policy) = (changed.isLocked, changed.lockingPolicy)
        let apply: @Sendable (OathCredential) -> OathCredential = { current in
            // A credential being removed keeps its hold, whatever its policies say now.
            if current.isHeldForRemoval { return current }
            var next = current
            if isLocked { next.lockCredential(policyName: policy ?? "unknown") } else { next.unlockCredential() }
            return next
        }
        guard let before = try await counters.updateOathCredential(credentialId: changed.id, apply) else { return changed }
        return apply(before)
    }

    private func remember(_ credential: OathCredential) {
        if cacheEnabled { cache[credential.id] = credential }
    }

    /// The credential with the lock state its policies give it now.
    private func applyingPolicies(_ credential: OathCredential) async -> OathCredential {
        guard let state = await evaluator.lockState(policies: credential.policies, isLocked: credential.isLocked,
                                                    lockingPolicy: credential.lockingPolicy) else { return credential }
        var changed = credential
        if state.isLocked {
            changed.lockCredential(policyName: state.lockingPolicy ?? "unknown")
            logger.w("Credential \(credential.id) locked by the policy '\(state.lockingPolicy ?? "unknown")'", error: nil)
        } else {
            changed.unlockCredential()
            logger.i("Credential \(credential.id) unlocked: its policies pass")
        }
        return changed
    }
}
