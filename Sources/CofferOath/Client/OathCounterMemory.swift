import CofferMFACommons
import CofferStorage
import Foundation

/// The rule that a HOTP counter never goes back, for ``OathClient``: a HOTP credential stored
/// with a secret seen before starts at the highest counter that secret was used with, so a
/// credential removed and added again (from the same QR code) issues no code its server has
/// seen. The counters live in the storage's `HOTPCounterLedger` (every storage Coffer ships
/// keeps one); a storage without one gets no memory.
struct OathCounterMemory: Sendable {
    let ledger: any HOTPCounterLedger

    /// The lock a credential holds while it is being removed: a locked credential issues no
    /// code, so the counter remembered is the last one used, whatever other processes do.
    static let removalHold = MfaPolicyEvaluator.removalHold

    /// `credential` with its counter raised to the highest its key was used with: in the ledger
    /// and in `stored` (the credential with the same id as it is stored now, if any).
    ///
    /// - Throws: ``OathStorageError/storageFailure(_:_:)`` when the ledger cannot be read: the
    ///   floor is not known, so nothing is stored (never taken for 0).
    func raising(_ credential: OathCredential, over stored: OathCredential?) async throws -> OathCredential {
        guard credential.oathType == .hotp, let identity = credential.keyIdentity else { return credential }
        let remembered: [String: UInt64]
        do {
            remembered = try await ledger.rememberedCounters()
        } catch {
            throw OathStorageError.storageFailure(
                "The record of HOTP counters cannot be read, and a HOTP credential is stored only once its counter is known", error)
        }
        var floor = Int(clamping: remembered[identity.fingerprint] ?? 0)
        if let stored, stored.oathType == .hotp, stored.keyIdentity == identity { floor = max(floor, stored.counter) }
        guard credential.counter < floor else { return credential }
        var raised = credential
        raised.counter = floor
        return raised
    }

    /// Records the counter of `credential` (when it is HOTP) before it is taken out.
    func remember(_ credential: OathCredential) async throws {
        guard credential.oathType == .hotp, let identity = credential.keyIdentity, credential.counter > 0 else { return }
        try await ledger.remember([identity.fingerprint: UInt64(credential.counter)])
    }
}

extension OathCredential {
    /// Whether a removal holds this credential (``OathCounterMemory/removalHold``): no code, no
    /// save and no policy may change it until the removal ends.
    var isHeldForRemoval: Bool { isLocked && lockingPolicy == OathCounterMemory.removalHold }
}
