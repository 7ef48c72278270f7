import Foundation

/// A key store whose keys open only with a passphrase: for machines with neither a TPM nor a
/// keyring session (what pass, gopass, cotp and totp-cli users have).
///
/// Each alias is one file, `<directory>/<alias>.passphrase-key` (0600, in a 0700 directory),
/// holding the alias's key ring sealed with AES-256-GCM under a key that scrypt derives from the
/// passphrase and a random salt. The scrypt parameters are stored with the salt and checked
/// before any work (``ScryptParameters``), so a crafted file cannot make opening it a CPU or
/// memory bomb. A wrong passphrase is ``WrappedKeyRingError/wrongPassphrase(alias:)``, and
/// deletes nothing.
///
/// A process derives the key once. When asked (`remember`), the derived key is also kept in the
/// kernel's user keyring (`@u`: readable by this user only, in kernel memory, never on disk) for
/// that long, so a day of commands asks once; ``forget(alias:)`` drops it early.
public struct PassphraseKeyStore: KeyRingStore {
    /// The directory of the `.passphrase-key` files.
    public var directory: URL { engine.directory }
    private let engine: WrappedKeyRingStore<PassphraseWrapping>

    /// Creates a passphrase key store.
    ///
    /// - Parameters:
    ///   - directory: Where the sealed files are; created (0700) with the first key.
    ///   - parameters: scrypt's cost for new files; ``ScryptParameters/standard`` by default.
    ///   - remember: For new files: how long to keep the derived key in the kernel's user keyring
    ///     after each use (at most a week); `nil`, the default, keeps it nowhere.
    ///   - passphrase: Gives the passphrase when a key must be derived.
    public init(
        directory: URL, parameters: ScryptParameters = .standard, remember: Duration? = nil,
        passphrase: @escaping @Sendable () async throws -> String
    ) {
        let seconds = remember.map { UInt32(clamping: max(0, $0.components.seconds)) } ?? 0
        engine = WrappedKeyRingStore(directory: directory, wrapping: PassphraseWrapping(
            passphrase: passphrase, parameters: parameters, remember: min(seconds, 7 * 24 * 3600)))
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
        if let header = try engine.header(alias) {
            KernelKeyring.remove(named: PassphraseWrapping.keyringName(alias: alias, header: header))
        }
        try engine.delete(alias)
    }

    /// The file that holds `alias`'s sealed keys.
    public func fileURL(for alias: String) throws -> URL {
        try engine.fileURL(for: alias)
    }

    /// How `alias`'s keys are sealed, read from its file without the passphrase: the scrypt
    /// parameters, how long the derived key is remembered, and whether it is remembered now.
    public func sealing(for alias: String) throws -> (parameters: ScryptParameters, remember: Duration, remembered: Bool)? {
        try engine.header(alias).map { header in
            let name = PassphraseWrapping.keyringName(alias: alias, header: header)
            return (header.scrypt, .seconds(header.rememberSeconds),
                    header.rememberSeconds > 0 && KernelKeyring.key(named: name) != nil)
        }
    }

    /// Seals `alias`'s keys under a new passphrase (`coffer key passwd`), once `current` gives
    /// the passphrase they are sealed under now (a remembered derived key is not enough). The
    /// keys do not change, so nothing sealed with them is touched; the file is replaced in one
    /// durable, atomic step (a kill leaves the old passphrase or the new one working).
    ///
    /// - Parameters:
    ///   - alias: Whose keys.
    ///   - current: Gives the passphrase the keys are sealed under now.
    ///   - new: Gives the new passphrase (a new salt is drawn either way).
    ///   - remember: How long to keep the derived key in the kernel keyring after each use from
    ///     now on (zero: never); `nil` keeps the current setting.
    /// - Returns: `false` when `alias` has no keys here.
    /// - Throws: ``WrappedKeyRingError/wrongPassphrase(alias:)`` when `current` is not the
    ///   passphrase; nothing changes then.
    @discardableResult
    public func changePassphrase(
        for alias: String, current: @escaping @Sendable () async throws -> String,
        to new: @escaping @Sendable () async throws -> String, remember: Duration? = nil
    ) async throws -> Bool {
        guard let header = try engine.header(alias) else { return false }
        var opening = PassphraseWrapping(passphrase: current, parameters: header.scrypt, remember: header.rememberSeconds)
        opening.acceptsRemembered = false
        let seconds = remember.map { UInt32(clamping: max(0, $0.components.seconds)) } ?? header.rememberSeconds
        let sealing = PassphraseWrapping(passphrase: new, parameters: engine.wrapping.parameters, remember: min(seconds, 7 * 24 * 3600))
        return try await engine.rewrap(alias, opening: opening, with: sealing)
    }

    /// Drops `alias`'s derived key from the kernel keyring. Returns whether one was kept.
    @discardableResult
    public func forget(alias: String) throws -> Bool {
        guard let header = try engine.header(alias) else { return false }
        return KernelKeyring.remove(named: PassphraseWrapping.keyringName(alias: alias, header: header))
    }
}
