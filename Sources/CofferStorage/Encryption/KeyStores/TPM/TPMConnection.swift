import CTPM
import Foundation

extension TrustedPlatformModule {
    /// One connection to the TPM, for one operation on the TPM thread. Closing it flushes every
    /// transient object and session it made.
    final class Connection {
        private let handle: OpaquePointer
        private let operation: String
        /// PCRs of the object being worked on, to name them in a policy failure.
        private var pcrs: [Int] = []

        init(tcti: String?, operation: String) throws(TPMError) {
            var opened: OpaquePointer?
            let code = coffer_tpm_open(tcti ?? TrustedPlatformModule.localDevice, &opened)
            guard code == 0, let opened else { throw Self.openError(code) }
            self.handle = opened
            self.operation = operation
        }

        func close() { coffer_tpm_close(handle) }

        /// The storage key: the persistent one at `handle` when given (or, for a new seal, when
        /// one exists at 0x81000001), else the one derived from the owner seed. Returns the
        /// handle to use, the persistent handle (0 for derived), and the key's name.
        func storageKey(handle persistent: UInt32? = nil) throws(TPMError) -> (UInt32, UInt32, [UInt8]) {
            if persistent == nil, let found = try? storageKey(handle: TrustedPlatformModule.persistentStorageKeyHandle) {
                return found
            }
            let template = TPMWireFormat.storageKeyTemplate
            var parent: UInt32 = 0
            var name = [UInt8](repeating: 0, count: 128)
            var nameLength = 0
            let code = coffer_tpm_parent(handle, template, template.count, persistent ?? 0, &parent, &name, name.count,
                                         &nameLength)
            try check(code)
            return (parent, persistent ?? 0, Array(name.prefix(nameLength)))
        }

        func policyDigest(pcrs: [Int], withAuthValue: Bool) throws(TPMError) -> [UInt8] {
            let selection = TPMWireFormat.pcrSelection(pcrs)
            var digest = [UInt8](repeating: 0, count: 80)
            var length = 0
            try check(coffer_tpm_policy_digest(handle, selection, selection.count, withAuthValue ? 1 : 0, &digest,
                                               digest.count, &length))
            // Marshalled TPM2B_DIGEST: drop the size.
            return Array(digest[2..<length])
        }

        func createSealed(parent: UInt32, template: [UInt8], sensitive: [UInt8]) throws(TPMError) -> ([UInt8], [UInt8]) {
            var publicArea = [UInt8](repeating: 0, count: 1024)
            var privateArea = [UInt8](repeating: 0, count: 2048)
            var publicLength = 0
            var privateLength = 0
            try check(coffer_tpm_create_sealed(handle, parent, template, template.count, sensitive, sensitive.count,
                                               &publicArea, publicArea.count, &publicLength, &privateArea,
                                               privateArea.count, &privateLength))
            return (Array(publicArea.prefix(publicLength)), Array(privateArea.prefix(privateLength)))
        }

        func unseal(_ object: SealedObject, parent: UInt32, authValue: [UInt8]) throws(TPMError) -> [UInt8] {
            pcrs = object.binding.pcrs
            let selection = object.binding.pcrs.isEmpty ? nil : TPMWireFormat.pcrSelection(object.binding.pcrs)
            var data = [UInt8](repeating: 0, count: 256)
            defer { coffer_tpm_wipe(&data, data.count) }
            var length = 0
            let code = coffer_tpm_unseal(handle, parent, object.publicArea, object.publicArea.count, object.privateArea,
                                         object.privateArea.count, authValue, authValue.count, selection,
                                         selection?.count ?? 0, object.binding.hasPIN ? 1 : 0, &data, data.count, &length)
            try check(code)
            return Array(data.prefix(length))
        }

        func capability(_ capability: UInt32, property: UInt32, count: UInt32) throws(TPMError) -> [UInt8] {
            var data = [UInt8](repeating: 0, count: 4096)
            var length = 0
            try check(coffer_tpm_capability(handle, capability, property, count, &data, data.count, &length))
            return Array(data.prefix(length))
        }

        private func check(_ code: UInt32) throws(TPMError) {
            guard code != 0 else { return }
            throw TPMError.from(code, operation: operation, pcrs: pcrs)
        }

        private static func openError(_ code: UInt32) -> TPMError {
            if code == UInt32(COFFER_TPM_NOT_LOADED), let missing = coffer_tpm_load() {
                return .unavailable(reason: String(cString: missing))
            }
            if (code >> 16) & 0xFF == 10 { return TPMError.from(code, operation: "connect", pcrs: []) }
            return .unavailable(reason: "no TPM was found (tpm2-tss error 0x\(String(code, radix: 16))); "
                + "set COFFER_TPM_TCTI to the one to use, for example device:/dev/tpmrm0")
        }
    }
}
