import Foundation

/// Why a TPM operation failed. Every case says what to do; none carries a key, a PIN or a blob.
public enum TPMError: Error, Sendable, Equatable {
    /// There is no TPM to use here: tpm2-tss is missing, no TPM device exists, or the one named
    /// by `COFFER_TPM_TCTI` cannot be reached.
    case unavailable(reason: String)
    /// The TPM did not answer within `seconds`.
    case timedOut(seconds: Int)
    /// The TPM is in dictionary-attack lockout after too many wrong PINs; it refuses PIN-protected
    /// keys until the lockout ends (`recoverySeconds`, when the TPM says) or its owner resets it.
    case lockedOut(recoverySeconds: UInt32?)
    /// The PIN given is not the one the key was sealed with. The TPM counted the attempt.
    case wrongPIN
    /// The key is sealed with a PIN and none was given.
    case pinRequired
    /// The key is bound to PCR values that have changed since it was sealed (a firmware, boot
    /// loader or kernel update, or a PCR extended since boot).
    case pcrPolicyFailed(pcrs: [Int])
    /// The key was sealed by another TPM, or this TPM's owner hierarchy was cleared since.
    case otherTPM
    /// The owner hierarchy has a password, so Coffer cannot derive its storage key there.
    case ownerHierarchyProtected
    /// The TPM presents another storage key than the one `record` holds, recorded when the
    /// first key in that directory was sealed: another TPM, or a program answering in its place
    /// (any local user can listen on a network TCTI's port while the TPM is down). Nothing was
    /// sealed: the key never reached it.
    case unrecognizedStorageKey(record: String)
    /// The TPM refused an operation for another reason.
    case failed(operation: String, code: UInt32)
}

extension TPMError: LocalizedError {
    /// What went wrong and what to do first; never a key, a PIN or a blob.
    public var errorDescription: String? {
        switch self {
        case .unavailable(let reason):
            return "No TPM can be used here: \(reason)."
        case .timedOut(let seconds):
            return "The TPM did not answer within \(seconds) s; check that it is running (COFFER_TPM_TCTI names which one is used)."
        case .lockedOut(let recovery):
            let wait = recovery.map { " for up to \($0) s" } ?? ""
            return "The TPM is in dictionary-attack lockout after too many wrong PINs and refuses PIN-protected keys\(wait); "
                + "wait, or have its owner run `tpm2_dictionarylockout --clear-lockout`. Nothing was deleted."
        case .wrongPIN:
            return "The TPM PIN is wrong; try again (the TPM counts wrong PINs and locks out after a few). Nothing was deleted."
        case .pinRequired:
            return "This key is sealed with a TPM PIN; give the PIN. Nothing was deleted."
        case .pcrPolicyFailed(let pcrs):
            return "The TPM refuses the key because PCR \(pcrs.map(String.init).joined(separator: ", ")) changed since it was sealed "
                + "(an update of the firmware, boot loader or kernel does this). Boot the system it was sealed on, or restore "
                + "the keys from a backup made with `coffer key move --to file`. Nothing was deleted."
        case .otherTPM:
            return "The key was sealed by another TPM (or this TPM's owner hierarchy was cleared since); only that TPM opens it. "
                + "Use the machine it was sealed on, or a backup of the keys. Nothing was deleted."
        case .unrecognizedStorageKey(let record):
            return "The TPM presents another storage key than the one recorded in \(record) when the first key there was sealed: "
                + "another TPM, or a program answering in its place. Nothing was sealed. Check COFFER_TPM_TCTI; if this TPM was "
                + "cleared or replaced on purpose, remove \(record)."
        case .ownerHierarchyProtected:
            return "The TPM's owner hierarchy has a password, so Coffer cannot make its storage key there; "
                + "make a persistent storage key at 0x81000001 (tpm2_createprimary and tpm2_evictcontrol) and Coffer uses it."
        case let .failed(operation, code) where [0x902, 0x903].contains(code & 0xFFFF) && (code >> 16) & 0xFF == 0:
            return "The TPM has no room left for \(code & 0xFFFF == 0x902 ? "objects" : "sessions") to \(operation). Without a resource "
                + "manager (a TPM reached as /dev/tpm0 or a software TPM's socket), a process killed in the middle of a TPM "
                + "operation leaves its objects behind: run `tpm2_flushcontext -t -s` once nothing else uses the TPM, or use "
                + "/dev/tpmrm0 (COFFER_TPM_TCTI=device:/dev/tpmrm0), whose resource manager cleans up after every process."
        case let .failed(operation, code):
            return "The TPM refused to \(operation) (TPM error 0x\(String(code, radix: 16))); `coffer doctor` shows the TPM's state."
        }
    }
}

extension TPMError: CustomStringConvertible {
    /// The same text as ``errorDescription``.
    public var description: String { errorDescription ?? "TPMError" }
}

extension TPMError {
    /// Whether the TPM asked to be tried again: out of room for objects or sessions (with no
    /// resource manager, shared by every process), or busy (TPM_RC_RETRY, TPM_RC_YIELDED,
    /// TPM_RC_TESTING).
    var isTransient: Bool {
        guard case .failed(_, let code) = self, (code >> 16) & 0xFF == 0 else { return false }
        return [0x902, 0x903, 0x922, 0x908, 0x90A].contains(code & 0xFFFF)
    }

    /// Whether the TPM refused the PIN (wrong, or locked out after wrong ones).
    var isPINRefusal: Bool {
        switch self {
        case .wrongPIN, .lockedOut: return true
        default: return false
        }
    }

    /// Whether the TPM could not be reached or did not answer (not a refusal of its own).
    var isOutage: Bool {
        switch self {
        case .unavailable, .timedOut: return true
        default: return false
        }
    }

    /// The error for return code `code` of tpm2-tss while doing `operation`.
    static func from(_ code: UInt32, operation: String, pcrs: [Int]) -> TPMError {
        let layer = (code >> 16) & 0xFF
        switch layer {
        case 0:
            // The TPM's own code: format 1 codes carry a handle, session or parameter number.
            let tpmCode = code & 0xFFFF
            if tpmCode & 0x80 != 0 {
                switch tpmCode & 0xBF {
                case 0x8E: return .wrongPIN                        // TPM_RC_AUTH_FAIL
                case 0x9D: return pcrs.isEmpty ? .failed(operation: operation, code: code) : .pcrPolicyFailed(pcrs: pcrs)
                case 0xA2: return .ownerHierarchyProtected         // TPM_RC_BAD_AUTH
                default: return .failed(operation: operation, code: code)
                }
            }
            if tpmCode == 0x921 { return .lockedOut(recoverySeconds: nil) }  // TPM_RC_LOCKOUT
            return .failed(operation: operation, code: code)
        case 10:
            return .unavailable(reason: "the TPM could not be reached (\(tctiReason(code)))")
        default:
            return .failed(operation: operation, code: code)
        }
    }

    private static func tctiReason(_ code: UInt32) -> String {
        switch code & 0xFFFF {
        case 10: return "no TPM device, or nothing listening where COFFER_TPM_TCTI points"
        case 8: return "the connection was refused"
        case 11: return "the TCTI in COFFER_TPM_TCTI is not valid"
        case 21: return "the TCTI in COFFER_TPM_TCTI is not installed or not supported"
        case 12: return "permission denied: the TPM device is not accessible to this user (the tss group)"
        default: return "TCTI error 0x\(String(code, radix: 16))"
        }
    }
}
