import Foundation

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
///   (``TPMError/lockedOut(recoverySeconds:)``). A PIN the TPM refused is not offered again by
///   the same store.
/// - SHA-256 PCRs the object is bound to (for example `[7]`, Secure Boot's state): the key opens
///   only while they hold the values they had when it was sealed. A firmware or boot loader
///   update changes them and locks the key; move the keys to a file first (`coffer key move`).
///
/// Errors are typed: no TPM (``TPMError/unavailable(reason:)``), another TPM's file
/// (``TPMError/otherTPM``), a changed file (``KeyStoreError/corrupted(alias:location:reason:)``
/// or ``WrappedKeyRingError/doesNotOpen(alias:location:)``). None of them deletes anything.
public struct TPMKeyStore: KeyRingStore {
    /// How an alias's keys are sealed, as its file says (read without the TPM).
    public struct Sealing: Sendable, Equatable {
        /// The SHA-256 PCRs the key is bound to (empty: none).
        public var pcrs: [Int]
        /// Whether a PIN protects it.
        public var hasPIN: Bool
        /// The persistent storage key it is sealed under, or `nil` for the derived one.
        public var persistentParent: UInt32?
    }

    /// The directory of the `.tpm-key` files.
    public var directory: URL { engine.directory }
    /// The TPM that seals and unseals.
    public var tpm: TrustedPlatformModule { engine.wrapping.tpm }
    private let engine: WrappedKeyRingStore<TPMWrapping>

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
        engine = WrappedKeyRingStore(directory: directory, wrapping: TPMWrapping(
            tpm: tpm, pcrs: pcrs, pin: pin, identityRecord: directory.appendingPathComponent("tpm-identity")))
    }

    public func primaryKey(for alias: String) async throws -> VersionedKey? {
        try await engine.ring(alias)?.primary
    }

    public func key(for alias: String, id: UInt32) async throws -> VersionedKey? {
        try await engine.ring(alias)?.key(id: id)
    }

    @discardableResult
    public func createKey(for alias: String) async throws -> VersionedKey {
        try await engine.modify(alias, KeyRing.creatingKey(in:))
    }

    @discardableResult
    public func rotateKey(for alias: String) async throws -> VersionedKey {
        try await engine.modify(alias, KeyRing.rotatingKey(in:))
    }

    public func keyRing(for alias: String) async throws -> KeyRing? {
        try await engine.ring(alias)
    }

    public func insertKeyRing(_ ring: KeyRing, for alias: String) async throws {
        try await engine.insert(ring, for: alias)
    }

    public func deleteKeys(for alias: String) async throws {
        try engine.delete(alias)
    }

    /// The file that holds `alias`'s sealed keys.
    public func fileURL(for alias: String) throws -> URL {
        try engine.fileURL(for: alias)
    }

    /// Checks that `alias`'s keys would open on this TPM, without unsealing them (so without
    /// asking for the PIN or spending one of the TPM's tries): the file is intact, sealed by this
    /// TPM (else ``TPMError/otherTPM``), and its PCRs hold the values it is bound to (else
    /// ``TPMError/pcrPolicyFailed(pcrs:)``). A wrong PIN is only found by opening. Returns
    /// `false` when `alias` has no keys.
    public func checkSealedHere(for alias: String) async throws -> Bool {
        guard let header = try engine.header(alias) else { return false }
        try await tpm.check(header.sealedObject)
        return true
    }

    /// How `alias`'s keys are sealed, read from its file without the TPM: `nil` when it has none.
    public func sealing(for alias: String) throws -> Sealing? {
        try engine.header(alias).map {
            Sealing(pcrs: $0.pcrs, hasPIN: $0.pinSalt != nil, persistentParent: $0.parentHandle == 0 ? nil : $0.parentHandle)
        }
    }

    /// Seals `alias`'s keys again with a new PIN, or none (`coffer key passwd`), bound to the
    /// same PCRs; `current` gives the PIN they have now (the TPM checks it, and counts a wrong
    /// one). The keys do not change; the file is replaced in one durable, atomic step.
    ///
    /// - Parameters:
    ///   - alias: Whose keys.
    ///   - current: Gives the PIN they have now; `nil` when they have none.
    ///   - new: Gives the new PIN; `nil` for none.
    /// - Returns: `false` when `alias` has no keys here.
    @discardableResult
    public func changePIN(
        for alias: String, current: (@Sendable () async throws -> String)?, to new: (@Sendable () async throws -> String)?
    ) async throws -> Bool {
        guard let header = try engine.header(alias) else { return false }
        let wrapping = engine.wrapping
        let opening = TPMWrapping(tpm: wrapping.tpm, pcrs: header.pcrs, pin: current, identityRecord: wrapping.identityRecord)
        let sealing = TPMWrapping(tpm: wrapping.tpm, pcrs: header.pcrs, pin: new, identityRecord: wrapping.identityRecord)
        return try await engine.rewrap(alias, opening: opening, with: sealing)
    }
}
