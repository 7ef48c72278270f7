import CTPM
import Crypto
import Dispatch
import Foundation
import Synchronization

/// A TPM 2.0, reached through tpm2-tss (loaded at run time: the package builds without TPM
/// development files, and a machine without tpm2-tss gets ``TPMError/unavailable(reason:)``).
///
/// It seals small secrets to this TPM: a sealed data object under a storage key the TPM derives
/// from its owner-hierarchy seed (or the persistent storage key at `0x81000001`, where one
/// exists), created and unsealed in sessions salted with that key, so the secret never crosses
/// to the TPM in the clear. The object's blobs can be stored anywhere: only this TPM opens them.
///
/// Each operation connects, does its work, flushes every transient object and session it made,
/// and disconnects, so processes share the TPM's few slots and a TPM without a resource manager
/// (a software TPM on a socket) serves them one after the other. Calls run on a thread of their
/// own with a deadline: a TPM that does not answer gives ``TPMError/timedOut(seconds:)``.
public struct TrustedPlatformModule: Sendable {
    /// Which TPM, in tpm2-tss's TCTI syntax (`device:/dev/tpmrm0`, `swtpm:path=/run/swtpm.sock`,
    /// `swtpm:host=127.0.0.1,port=2321`); `nil` lets tpm2-tss choose (the kernel's resource
    /// manager, `/dev/tpmrm0`, first).
    public let tcti: String?
    /// How long one operation may take.
    public let timeout: Duration

    /// The persistent handle where a storage root key is kept by convention (TCG provisioning).
    static let persistentStorageKeyHandle: UInt32 = 0x8100_0001

    /// A TPM chosen by `tcti`.
    public init(tcti: String?, timeout: Duration = .seconds(5)) {
        self.tcti = tcti.flatMap { $0.isEmpty ? nil : $0 }
        self.timeout = timeout
    }

    /// The TPM named by `COFFER_TPM_TCTI`, or tpm2-tss's own choice when it is not set.
    public static func fromEnvironment(timeout: Duration = .seconds(5)) -> TrustedPlatformModule {
        TrustedPlatformModule(tcti: ProcessEnvironment.value("COFFER_TPM_TCTI"), timeout: timeout)
    }

    /// Where this TPM is, for messages.
    public var location: String { tcti ?? Self.localDevice }

    /// The TCTI used when none is named: the kernel's TPM device, `/dev/tpmrm0` (its resource
    /// manager) or else `/dev/tpm0` — never tpm2-tss's own fallbacks, which go on to a software
    /// TPM on localhost TCP port 2321 that any local user could be listening on.
    static var localDevice: String {
        if access("/dev/tpmrm0", F_OK) != 0, access("/dev/tpm0", F_OK) == 0 { return "device:/dev/tpm0" }
        return "device:/dev/tpmrm0"
    }

    // MARK: - Sealing

    /// How a secret is bound: to the storage key it was sealed under, and to what unseals it.
    struct Binding: Sendable, Equatable {
        /// The persistent handle of the storage key, or 0 for the derived one.
        var parentHandle: UInt32
        /// The storage key's TPM name (marshalled TPM2B_NAME).
        var parentName: [UInt8]
        /// SHA-256 PCRs the object's policy requires to be as they were when it was sealed.
        var pcrs: [Int]
        var hasPIN: Bool
    }

    /// A sealed object: its blobs, and how it is bound.
    struct SealedObject: Sendable, Equatable {
        var publicArea: [UInt8]
        var privateArea: [UInt8]
        var binding: Binding
    }

    /// Whether the TCTI reaches the TPM over the network (a `swtpm` or `mssim` TCTI without a
    /// Unix socket `path=`, which tpm2-tss connects to by TCP): a test set-up, since any local
    /// user can listen on that port while the TPM is down and answer the first seal.
    public var isNetworkTCTI: Bool {
        guard let tcti else { return false }
        // A command (`cmd:socat - TCP:…`) may reach anything.
        if tcti.lowercased().hasPrefix("cmd") { return true }
        let parts = tcti.lowercased().split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = parts[0], configuration = parts.count > 1 ? parts[1] : ""
        // `swtpm`, `mssim`, or their libraries' names (libtss2-tcti-swtpm.so.0).
        guard name.contains("swtpm") || name.contains("mssim") else { return false }
        // Without a socket path, or with a host or port beside one (tpm2-tss then uses TCP).
        let keys = configuration.split(separator: ",").map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? "" }
        return !keys.contains("path") || keys.contains("host") || keys.contains("port")
    }

    /// The storage key a directory's first seal was made under: its persistent handle (0 for
    /// the derived one) and its TPM name. Later seals there must find the same one.
    struct StorageKeyIdentity: Sendable, Equatable {
        var handle: UInt32
        var name: [UInt8]
        /// Where it is recorded, for messages.
        var record: String
    }

    /// Seals `secret` (at most 128 bytes) to this TPM. With `expected`, only under that storage
    /// key: a TPM presenting another one gets nothing (``TPMError/unrecognizedStorageKey(record:)``).
    func seal(_ secret: [UInt8], authValue: [UInt8]?, pcrs: [Int], expected: StorageKeyIdentity? = nil) async throws(TPMError) -> SealedObject {
        let pcrs = pcrs.sorted()
        return try await run("seal a key") { connection throws(TPMError) in
            let (parent, handle, name) = try connection.storageKey()
            if let expected, expected.handle != handle || expected.name != name {
                throw .unrecognizedStorageKey(record: expected.record)
            }
            var policy: [UInt8]?
            if !pcrs.isEmpty {
                policy = try connection.policyDigest(pcrs: pcrs, withAuthValue: authValue != nil)
            }
            let template = TPMWireFormat.sealedObjectTemplate(policy: policy, hasPIN: authValue != nil)
            var sensitive = TPMWireFormat.sensitiveCreate(auth: authValue ?? [], data: secret)
            defer { coffer_tpm_wipe(&sensitive, sensitive.count) }
            let (publicArea, privateArea) = try connection.createSealed(parent: parent, template: template, sensitive: sensitive)
            return SealedObject(publicArea: publicArea, privateArea: privateArea,
                                binding: Binding(parentHandle: handle, parentName: name, pcrs: pcrs, hasPIN: authValue != nil))
        }
    }

    /// Unseals `object`. Checks first that the storage key is the one it was sealed under, so
    /// another TPM's files give ``TPMError/otherTPM`` rather than a vaguer refusal.
    func unseal(_ object: SealedObject, authValue: [UInt8]?) async throws(TPMError) -> [UInt8] {
        if object.binding.hasPIN && authValue == nil { throw .pinRequired }
        return try await run("unseal a key") { connection throws(TPMError) in
            let (parent, _, name) = try connection.storageKey(handle: object.binding.parentHandle)
            guard name == object.binding.parentName else { throw .otherTPM }
            return try connection.unseal(object, parent: parent, authValue: authValue ?? [])
        }
    }

    /// Checks, without unsealing (which would spend one of the TPM's tries when a PIN protects
    /// it), that `object` would open here: its storage key is this TPM's (else
    /// ``TPMError/otherTPM``) and its PCRs hold the values it was bound to (else
    /// ``TPMError/pcrPolicyFailed(pcrs:)``).
    func check(_ object: SealedObject) async throws(TPMError) {
        try await run("check a sealed key") { connection throws(TPMError) in
            let (_, _, name) = try connection.storageKey(handle: object.binding.parentHandle)
            guard name == object.binding.parentName else { throw .otherTPM }
            guard !object.binding.pcrs.isEmpty else { return }
            let now = try connection.policyDigest(pcrs: object.binding.pcrs, withAuthValue: object.binding.hasPIN)
            guard TPMWireFormat.authPolicy(ofPublic: object.publicArea) == now else {
                throw .pcrPolicyFailed(pcrs: object.binding.pcrs)
            }
        }
    }

    // MARK: - Status

    /// What `coffer doctor` reports about a TPM.
    public struct Status: Sendable, Equatable {
        /// The manufacturer's id, as four letters (`IBM`, `INTC`, `MSFT`, ...).
        public var manufacturer: String
        /// Whether the TPM refuses PIN-protected keys now after too many wrong PINs.
        public var inLockout: Bool
        /// Wrong PINs counted now.
        public var failedAuthorizations: UInt32
        /// How many wrong PINs the TPM allows before locking out.
        public var maximumFailedAuthorizations: UInt32
        /// Seconds until one counted failure is forgotten.
        public var lockoutInterval: UInt32
        /// Seconds a lockout lasts.
        public var lockoutRecovery: UInt32
        /// Whether a persistent storage key exists at 0x81000001 (Coffer seals under it then).
        public var hasPersistentStorageKey: Bool
    }

    /// The TPM's manufacturer and dictionary-attack state.
    public func status() async throws(TPMError) -> Status {
        try await run("report its state") { connection throws(TPMError) in
            let fixed = TPMWireFormat.properties(try connection.capability(6, property: 0x100, count: 64))
            let variable = TPMWireFormat.properties(try connection.capability(6, property: 0x200, count: 64))
            let handles = try connection.capability(1, property: Self.persistentStorageKeyHandle, count: 1)
            let manufacturerCode = fixed[0x105] ?? 0
            let manufacturer = String(decoding: withUnsafeBytes(of: manufacturerCode.bigEndian) { Array($0) }
                .filter { $0 >= 0x21 && $0 < 0x7F }, as: UTF8.self)
            return Status(
                manufacturer: manufacturer,
                inLockout: (variable[0x200] ?? 0) & 0x200 != 0,
                failedAuthorizations: variable[0x20E] ?? 0,
                maximumFailedAuthorizations: variable[0x20F] ?? 0,
                lockoutInterval: variable[0x210] ?? 0,
                lockoutRecovery: variable[0x211] ?? 0,
                hasPersistentStorageKey: Self.listsHandle(handles, Self.persistentStorageKeyHandle))
        }
    }

    /// Why this TPM cannot be used now, or `nil` when it answers: blocks the calling thread for
    /// at most `timeout` (for synchronous entry points such as `SecuredKeyEncryptor.init?()`).
    public func usabilityProblem(timeout: Duration = .seconds(3)) -> TPMError? {
        if let missing = coffer_tpm_load() { return .unavailable(reason: String(cString: missing)) }
        let outcome = Mutex<TPMError??>(nil)
        let done = DispatchSemaphore(value: 0)
        let tcti = self.tcti
        // No Swift concurrency: this may be called from a cooperative thread, which it blocks.
        queue.async {
            do throws(TPMError) {
                let connection = try Connection(tcti: tcti, operation: "answer")
                defer { connection.close() }
                _ = try connection.capability(6, property: 0x100, count: 1)
                outcome.withLock { $0 = .some(nil) }
            } catch {
                outcome.withLock { $0 = .some(error) }
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout.timeInterval) == .success else {
            return .timedOut(seconds: Int(timeout.components.seconds))
        }
        return outcome.withLock { $0 } ?? nil
    }

    /// Whether a marshalled TPMS_CAPABILITY_DATA of TPM_CAP_HANDLES lists `handle`.
    private static func listsHandle(_ data: [UInt8], _ handle: UInt32) -> Bool {
        var reader = TPMWireFormat.Reader(data)
        guard reader.u32() == 1, let count = reader.u32() else { return false }
        for _ in 0..<min(count, 256) where reader.u32() == handle { return true }
        return false
    }

    // MARK: - Running

    /// One serial queue per TPM: a process does one operation at a time on each TPM, and a TPM
    /// that hangs holds up only its own callers.
    private static let queues = Mutex<[String: DispatchQueue]>([:])

    private var queue: DispatchQueue {
        Self.queues.withLock { queues in
            let name = tcti ?? ""
            if let queue = queues[name] { return queue }
            let queue = DispatchQueue(label: "org.coffer.tpm")
            queues[name] = queue
            return queue
        }
    }

    /// Runs `body` with a fresh connection on the TPM thread (one operation at a time per
    /// process), answering ``TPMError/timedOut(seconds:)`` at the deadline even if the TPM never
    /// does: the stuck call is left to finish on its own.
    private func run<R: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (Connection) throws(TPMError) -> R
    ) async throws(TPMError) -> R {
        if let missing = coffer_tpm_load() { throw .unavailable(reason: String(cString: missing)) }
        let tcti = self.tcti
        let seconds = Int((timeout.components.seconds)) + (timeout.components.attoseconds > 0 ? 1 : 0)
        let answer = Answer<R>()
        let result: Result<R, TPMError> = await withCheckedContinuation { continuation in
            answer.set { continuation.resume(returning: $0) }
            let deadline = ContinuousClock.now + timeout
            queue.async {
                var outcome: Result<R, TPMError>
                var attempt = 0
                repeat {
                    do throws(TPMError) {
                        let connection = try Connection(tcti: tcti, operation: operation)
                        defer { connection.close() }
                        outcome = .success(try body(connection))
                    } catch {
                        outcome = .failure(error)
                    }
                    // A TPM without a resource manager (a software TPM on a socket, /dev/tpm0)
                    // has room for three objects, shared by every process: when it is full, the
                    // others' objects leave as their operations end. Try again shortly.
                    guard case .failure(let error) = outcome, error.isTransient, ContinuousClock.now < deadline else { break }
                    attempt += 1
                    usleep(UInt32.random(in: 2_000...10_000) * UInt32(min(attempt, 8)))
                } while true
                answer.give(outcome)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval) {
                answer.give(.failure(.timedOut(seconds: seconds)))
            }
        }
        return try result.get()
    }

    /// Delivers the first of the outcomes offered (the operation's, or the deadline's).
    private final class Answer<R: Sendable>: Sendable {
        private let resume = Mutex<(@Sendable (Result<R, TPMError>) -> Void)?>(nil)
        func set(_ body: @escaping @Sendable (Result<R, TPMError>) -> Void) { resume.withLock { $0 = body } }
        func give(_ result: Result<R, TPMError>) {
            let body = resume.withLock { current in
                defer { current = nil }
                return current
            }
            body?(result)
        }
    }
}
