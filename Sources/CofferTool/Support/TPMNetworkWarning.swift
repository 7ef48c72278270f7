import CofferStorage
import Foundation
import Synchronization

/// The warning for a TPM reached over TCP (`COFFER_TPM_TCTI=swtpm:host=…`): a test set-up, since
/// any local user can listen on that port while the TPM is down and answer the first seal.
enum TPMNetworkWarning {
    private static let said = Mutex(false)

    /// The words, when `tpm` is reached over the network; `nil` otherwise.
    static func words(for tpm: TrustedPlatformModule = .fromEnvironment()) -> String? {
        guard tpm.isNetworkTCTI, let tcti = tpm.tcti else { return nil }
        return "COFFER_TPM_TCTI (\(TerminalText.escaped(tcti))) reaches the TPM over TCP or through a command: any local user can listen on that port while "
            + "the TPM is down and answer in its place; outside tests use /dev/tpmrm0 or a Unix socket (swtpm:path=…)"
    }

    /// Says ``words(for:)`` on standard error, once per process, when the TPM is used.
    static func warnIfNetwork() {
        guard let words = words(), said.withLock({ said in defer { said = true }; return !said }) else { return }
        StandardStreams.note("coffer: warning: \(words)")
    }
}
