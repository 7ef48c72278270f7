import Crypto
import Foundation
import Synchronization

/// A key store whose keys only this machine's TPM 2.0 opens: a copied disk, backup or home
/// directory opens nothing.
///
/// Each alias is one file, `<directory>/<alias>.tpm-key` (0600, in a 0700 directory checked
/// like ``FileKeyStore``'s), holding the alias's key ring sealed under a wrapping key that the
/// TPM keeps sealed (``TrustedPlatformModule``). A process unseals the wrapping key once and keeps
/// the ring in memory while the file stays the same; rotating re-seals the ring under the same
/// wrapping key, so it needs no new TPM object.
///
/// Optional, and off by default:
/// - a PIN, the sealed object's auth value: the TPM counts wrong PINs and locks out after a few
///   (``TPMError/lockedOut(recoverySeconds:)``);
/// - SHA-256 PCRs the object is bound to (for example `[7]`, Secure Boot's state): the key opens
///   only while they hold the values they had when it was sealed. A firmware or boot loader
///   update changes them and locks the key; move the keys to a file first (`coffer key move`).
///
/// Errors are typed: no TPM (``TPMError/unavailable(reason:)``), another TPM's file
/// (``TPMError/otherTPM``), a changed file (``KeyStoreError/corrupted(alias:location:reason:)``).
/// None of them deletes anything.
public struct TPMKeyStore: KeyRingStore {
    /// The directory of the `.tpm-key` files.
    public let directory: URL
    /// The TPM that seals and unseals.
    public let tpm: TrustedPlatformModule
    /// PCRs that new keys are bound to (empty: none).
    public let pcrs: [Int]
    /// Gives the PIN: for new keys when set, and for keys sealed with one.
    public let pin: (@Sendable () async throws -> String)?
    private let cache = Cache()

    /// Creates a TPM key store.
    ///
    /// - Parameters:
    ///   - directory: Where the sealed files are; created (0700) with the first key.
    ///   - tpm: Which TPM; by default the one `COFFER_TPM_TCTI` names, else tpm2-tss's choice.
    ///   - pcrs: SHA-256 PCR indexes (0–23) to bind new keys to; none by default.
    ///   - pin: Asked for a PIN when one is needed; new keys get a PIN when this is set.
    public init(
        directory: URL, tpm: TrustedPlatformModule = .fromEnvironment(), pcrs: [Int] = [],
        pin: (@Sendable () async throws -> String)? = nil
    ) {
        self.directory = directory
        self.tpm = tpm
        self.pcrs = pcrs
        self.pin = pin
    }

    public func primaryKey(for alias: String) async throws -> VersionedKey? {
        try await read(alias)?.primary
    }

    public func key(for alias: String, id: UInt32) async throws -> VersionedKey? {
        try await read(alias)?.key(id: id)
    }

    @discardableResult
    public func createKey(for alias: String) async throws -> VersionedKey {
        try await modify(alias, KeyRing.creatingKey(in:))
    }

    @discardableResult
    public func rotateKey(for alias: String) async throws -> VersionedKey {
        try await modify(alias, KeyRing.rotatingKey(in:))
    }

    public func keyRing(for alias: String) async throws -> KeyRing? {
        try await read(alias)
    }

    public func insertKeyRing(_ ring: KeyRing, for alias: String) async throws {
        let location = try fileURL(for: alias).path
        _ = try await modify(alias) { existing in
            guard existing == nil else { throw KeyStoreError.alreadyExists(alias: alias, location: location) }
            return (ring, ring.primary)
        }
    }

    public func deleteKeys(for alias: String) async throws {
        let file = try file(for: alias)
        do {
            try file.remove()
        } catch {
            throw KeyStoreError.storageFailed(alias: alias, cause: error)
        }
        cache.forget(alias)
    }

    /// The file that holds `alias`'s sealed keys.
    public func fileURL(for alias: String) throws -> URL {
        try file(for: alias).url
    }

    /// How `alias`'s keys are sealed, read from its file without the TPM: `nil` when it has none.
    public func sealing(for alias: String) throws -> (pcrs: [Int], hasPIN: Bool, persistentParent: UInt32?)? {
        let file = try file(for: alias)
        guard let data = try readFile(file, alias: alias) else { return nil }
        let sealed = try decode(data, alias: alias, file: file)
        return (sealed.pcrs, sealed.pinSalt != nil, sealed.parentHandle == 0 ? nil : sealed.parentHandle)
    }

    // MARK: - Reading

    private func read(_ alias: String) async throws -> KeyRing? {
        let file = try file(for: alias)
        let stamp = FileStamp.of(file.path)
        switch stamp {
        case .missing:
            cache.forget(alias)
            return nil
        case .found(let found):
            if let ring = cache.ring(alias, stamp: found) { return ring }
        case .unknown:
            break
        }
        guard let data = try readFile(file, alias: alias) else { return nil }
        let sealed = try decode(data, alias: alias, file: file)
        let wrappingKey = try await wrappingKey(for: sealed, alias: alias)
        let ring = try openRing(sealed, with: wrappingKey, alias: alias, file: file)
        if case .found(let found) = stamp {
            cache.store(alias, Cache.Entry(stamp: found, ring: ring, object: sealed.sealedObject, wrappingKey: wrappingKey))
        }
        return ring
    }

    /// The wrapping key of `sealed`: from memory when this process unsealed the same object
    /// before, else from the TPM.
    private func wrappingKey(for sealed: TPMSealedKeyRing, alias: String) async throws -> SymmetricKey {
        let object = sealed.sealedObject
        if let known = cache.wrappingKey(alias, object: object) { return known }
        // A PIN the TPM refused is not offered again by this store: each try counts towards the
        // TPM's lockout, and one command may need the key several times.
        if let refused = cache.refusal(for: object) { throw refused }
        var authValue: [UInt8]?
        if let salt = sealed.pinSalt {
            guard let pin else { throw TPMError.pinRequired }
            do {
                authValue = TPMSealedKeyRing.authValue(pin: try await pin(), salt: salt)
            } catch {
                throw cache.remember(error, for: object)
            }
        }
        var secret: [UInt8]
        do {
            secret = try await tpm.unseal(object, authValue: authValue)
        } catch .wrongPIN {
            throw cache.remember(TPMError.wrongPIN, for: object)
        } catch .lockedOut(let recovery) {
            throw cache.remember(TPMError.lockedOut(recoverySeconds: recovery), for: object)
        }
        defer { secret.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        guard secret.count == 32 else {
            throw KeyStoreError.corrupted(alias: alias, location: try fileURL(for: alias).path,
                                          reason: "the TPM object holds \(secret.count) bytes, not a 32-byte key")
        }
        return SymmetricKey(data: secret)
    }

    private func openRing(
        _ sealed: TPMSealedKeyRing, with key: SymmetricKey, alias: String, file: DurableFile
    ) throws(KeyStoreError) -> KeyRing {
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.ring)
            let bytes = try AES.GCM.open(
                box, using: key,
                authenticating: TPMSealedKeyRing.authenticatedData(alias: alias, object: sealed.sealedObject))
            return try KeyRing(serialized: bytes)
        } catch {
            throw .corrupted(alias: alias, location: file.path,
                             reason: "the sealed key ring does not open under its TPM key (the file was changed)")
        }
    }

    // MARK: - Changing

    /// What the ring will be sealed under: the object already in the file (unsealed), or a new
    /// one sealed before the file is locked (a TPM call can take a while; the lock is held only
    /// for the file work).
    private enum Sealer {
        case existing(TrustedPlatformModule.SealedObject, SymmetricKey)
        case new(TrustedPlatformModule.SealedObject, SymmetricKey, pinSalt: Data?)
    }

    private enum Outcome {
        case done(VersionedKey)
        /// The file changed to another sealed object between the look and the lock: look again.
        case retry
    }

    private func modify(
        _ alias: String, _ change: @escaping (KeyRing?) throws -> (KeyRing?, VersionedKey)
    ) async throws -> VersionedKey {
        let file = try file(for: alias)
        for _ in 0..<8 {
            let sealer: Sealer
            if let data = try readFile(file, alias: alias) {
                let sealed = try decode(data, alias: alias, file: file)
                sealer = .existing(sealed.sealedObject, try await wrappingKey(for: sealed, alias: alias))
            } else {
                sealer = try await newSealer()
            }
            let outcome: Outcome
            do {
                outcome = try file.update { data -> (newContents: Data?, result: Outcome) in
                    let current = try data.map { try self.decode($0, alias: alias, file: file) }
                    switch (sealer, current) {
                    case let (.existing(object, key), current?) where current.sealedObject == object:
                        let ring = try self.openRing(current, with: key, alias: alias, file: file)
                        let (newRing, result) = try change(ring)
                        let contents = try newRing.map { try Self.seal($0, alias: alias, object: object, key: key,
                                                                          pinSalt: current.pinSalt) }
                        return (contents, .done(result))
                    case let (.new(object, key, pinSalt), nil):
                        let (newRing, result) = try change(nil)
                        let contents = try newRing.map { try Self.seal($0, alias: alias, object: object, key: key,
                                                                          pinSalt: pinSalt) }
                        return (contents, .done(result))
                    default:
                        return (nil, .retry)
                    }
                }
            } catch let error as KeyStoreError {
                throw error
            } catch {
                throw KeyStoreError.storageFailed(alias: alias, cause: error)
            }
            if case .done(let key) = outcome { return key }
        }
        throw KeyStoreError.storageFailed(alias: alias, cause: TPMError.failed(operation: "settle on one sealed key", code: 0))
    }

    /// A new wrapping key, sealed by the TPM with this store's PCRs and PIN.
    private func newSealer() async throws -> Sealer {
        var secret = [UInt8](repeating: 0, count: 32)
        defer { secret.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        let key = SymmetricKey(size: .bits256)
        key.withUnsafeBytes { secret = Array($0) }
        var pinSalt: Data?
        var authValue: [UInt8]?
        if let pin {
            let salt = Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
            pinSalt = salt
            authValue = TPMSealedKeyRing.authValue(pin: try await pin(), salt: salt)
        }
        let object = try await tpm.seal(secret, authValue: authValue, pcrs: pcrs)
        return .new(object, key, pinSalt: pinSalt)
    }

    private static func seal(
        _ ring: KeyRing, alias: String, object: TrustedPlatformModule.SealedObject, key: SymmetricKey, pinSalt: Data?
    ) throws -> Data {
        let box = try AES.GCM.seal(ring.serialized(), using: key,
                                   authenticating: TPMSealedKeyRing.authenticatedData(alias: alias, object: object))
        // A random 12-byte nonce always yields a combined representation.
        return TPMSealedKeyRing(object: object, pinSalt: pinSalt, ring: box.combined!).serialized()
    }

    // MARK: - Files

    private func file(for alias: String) throws(KeyStoreError) -> DurableFile {
        guard !alias.isEmpty else { throw .invalidAlias(alias, reason: "it is empty") }
        let name = FileKeyStore.escapedName(for: alias) + ".tpm-key"
        return DurableFile(url: directory.appendingPathComponent(name, isDirectory: false), requirement: .privateFile)
    }

    private func readFile(_ file: DurableFile, alias: String) throws -> Data? {
        do {
            return try file.read()
        } catch {
            throw KeyStoreError.storageFailed(alias: alias, cause: error)
        }
    }

    private func decode(_ data: Data, alias: String, file: DurableFile) throws(KeyStoreError) -> TPMSealedKeyRing {
        do {
            return try TPMSealedKeyRing(serialized: data)
        } catch {
            throw .corrupted(alias: alias, location: file.path, reason: error.reason)
        }
    }

    /// Rings and wrapping keys this process has opened, by alias; shared by copies of the store.
    private final class Cache: Sendable {
        struct Entry {
            var stamp: FileStamp
            var ring: KeyRing
            var object: TrustedPlatformModule.SealedObject
            var wrappingKey: SymmetricKey
        }

        private let entries = Mutex<[String: Entry]>([:])
        /// Why the TPM or the PIN source refused an object, by its public area.
        private let refusals = Mutex<[[UInt8]: any Error]>([:])

        func refusal(for object: TrustedPlatformModule.SealedObject) -> (any Error)? {
            refusals.withLock { $0[object.publicArea] }
        }

        func remember(_ error: any Error, for object: TrustedPlatformModule.SealedObject) -> any Error {
            refusals.withLock { $0[object.publicArea] = error }
            return error
        }

        func ring(_ alias: String, stamp: FileStamp) -> KeyRing? {
            entries.withLock { $0[alias].flatMap { $0.stamp == stamp ? $0.ring : nil } }
        }

        func wrappingKey(_ alias: String, object: TrustedPlatformModule.SealedObject) -> SymmetricKey? {
            entries.withLock { $0[alias].flatMap { $0.object == object ? $0.wrappingKey : nil } }
        }

        func store(_ alias: String, _ entry: Entry) { entries.withLock { $0[alias] = entry } }
        func forget(_ alias: String) { _ = entries.withLock { $0.removeValue(forKey: alias) } }
    }
}
