import CofferAuthenticator
import CofferStorage
import Foundation

extension DoctorCommand {
    /// The TPM: whether one answers here (and why not), its dictionary-attack state, and, when
    /// the accounts' key is sealed by it, how (PCRs, PIN, storage key).
    func checkTPM(recorded: Bool, in directory: URL, _ report: (Outcome, String, String) -> Void) async {
        let tpm = TrustedPlatformModule.fromEnvironment()
        let failing: Outcome = recorded ? .fail : .note
        if let network = TPMNetworkWarning.words(for: tpm) { report(recorded ? .fail : .note, "TPM connection", network) }
        do {
            let status = try await tpm.status()
            let lockout = status.inLockout
                ? "IN LOCKOUT after wrong PINs (PIN-protected keys refused for up to \(status.lockoutRecovery) s)"
                : "\(status.failedAuthorizations) of \(status.maximumFailedAuthorizations) wrong PINs counted"
            report(status.inLockout ? failing : .ok, "TPM",
                   "\(tpm.location) answers (manufacturer \(status.manufacturer.isEmpty ? "unknown" : status.manufacturer)); \(lockout)"
                   + (status.hasPersistentStorageKey ? "; persistent storage key at 0x81000001" : ""))
        } catch {
            report(failing, "TPM", error.localizedDescription)
        }
        guard recorded else { return }
        let store = TPMKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true), tpm: tpm)
        do {
            guard let sealing = try store.sealing(for: DefaultAuthenticatorStorage.keyAlias) else {
                report(.fail, "TPM key", "no sealed key file at \(try store.fileURL(for: DefaultAuthenticatorStorage.keyAlias).path)")
                return
            }
            let pcrs = sealing.pcrs.isEmpty ? "no PCR policy" : "bound to SHA-256 PCR \(sealing.pcrs.map(String.init).joined(separator: ","))"
            let parent = sealing.persistentParent.map { "under the persistent key 0x\(String($0, radix: 16))" }
                ?? "under the storage key derived from the owner hierarchy"
            let described = "\(DefaultAuthenticatorStorage.keyAlias), \(pcrs), \(sealing.hasPIN ? "PIN" : "no PIN"), \(parent)"
            do {
                if try await store.checkSealedHere(for: DefaultAuthenticatorStorage.keyAlias) {
                    report(.ok, "TPM key", described)
                } else {
                    report(.fail, "TPM key", "\(described): the sealed key file was removed while doctor read it")
                }
            } catch {
                report(.fail, "TPM key", "\(described): \(error.localizedDescription)")
            }
        } catch {
            report(.fail, "TPM key", error.localizedDescription)
        }
    }
}
