extension MfaPolicyEvaluator {
    /// The evaluator a client uses when its configuration names none: `biometricAvailable`,
    /// then `deviceTampering`.
    package static func standard(logger: any Logger) -> MfaPolicyEvaluator {
        create { config in
            config.logger = logger
            config.policies = [BiometricAvailablePolicy(), DeviceTamperingPolicy()]
        }
    }

    /// A credential's lock state after evaluating its `policies`, or `nil` when it does not
    /// change (both clients, reference §5.11):
    /// - no policies: unchanged, whatever the state (a lock set by hand stays);
    /// - unlocked and a policy fails: locked by that policy (`unknown` if it has no name);
    /// - locked and every policy passes: unlocked;
    /// - locked and another policy fails: locked by that one;
    /// - locked by a migration that is moving the credential (``migrationLock``): unchanged,
    ///   whatever its policies say, until the migration lets go; the same for a credential being
    ///   removed (``removalHold``).
    package func lockState(policies: String?, isLocked: Bool, lockingPolicy: String?) async -> (isLocked: Bool, lockingPolicy: String?)? {
        guard let policies, !policies.isEmpty else { return nil }
        if isLocked, let lockingPolicy,
           lockingPolicy == Self.migrationLock || lockingPolicy.hasPrefix(Self.migrationLock + " from ") || lockingPolicy == Self.removalHold {
            return nil
        }
        let result = await evaluate(credentialPolicies: policies)
        if result.isFailure {
            let name = result.nonCompliancePolicyName.flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"
            return isLocked && lockingPolicy == name ? nil : (true, name)
        }
        return isLocked ? (false, nil) : nil
    }

    /// The locking policy a migration gives a copy while it moves (`coffer-migration`, or
    /// `coffer-migration from <source>`), the same as the legacy `StorageMigration.movingPolicy`:
    /// the copy issues no code until its source has let go of it, so no HOTP code is issued twice.
    package static let migrationLock = "coffer-migration"

    /// The locking policy `OathClient` gives a HOTP credential while it removes it: a locked
    /// credential issues no code in any process, so the counter it records is the last one used.
    package static let removalHold = "coffer-removing"
}
