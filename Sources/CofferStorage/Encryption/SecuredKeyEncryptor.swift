import Foundation

/// Seals data with AES-256-GCM under a key kept where this machine keeps keys best: the OS
/// keyring (``SecretServiceKeyStore``) or the TPM (``TPMKeyStore``).
///
/// The spec's secure default: `SecuredKeyEncryptor()` returns an encryptor when a key can be
/// kept safely here and `nil` otherwise, so
///
/// ```swift
/// let encryptor = SecuredKeyEncryptor() ?? NoEncryptor()
/// ```
///
/// picks the best available. ``make(keyAlias:timeout:checkTimeout:)`` says why it cannot.
///
/// Where the key is, in this order:
/// 1. **The TPM, when a TPM-sealed key for the alias exists** (`<alias>.tpm-key` in
///    ``tpmKeyDirectory``). From then on the encryptor always uses it: when the TPM cannot be
///    used, encrypting and decrypting fail with a ``TPMError`` — it never falls back to the
///    keyring or to `nil` (which `?? NoEncryptor()` would turn into plaintext).
/// 2. **The OS keyring**, when the Secret Service is usable (libsecret present, a provider on the
///    session bus, the default collection unlocked): desktop sessions, as before TPM support.
/// 3. **The TPM** named by `COFFER_TPM_TCTI` (else `/dev/tpmrm0`), when there is no usable
///    keyring and a TPM answers: a headless server or a session without a keyring gets a key
///    sealed by its TPM (made on first use, in ``tpmKeyDirectory``).
/// 4. Otherwise `nil` (``make(keyAlias:timeout:checkTimeout:)`` throws the keyring's reason).
///
/// The initializers check synchronously: they block the calling thread for as long as that
/// takes: about a millisecond on a working keyring or TPM, at most 3 seconds each (plus a short
/// grace period) on one that does not answer.
public struct SecuredKeyEncryptor: Encryptor {
    /// Where an encryptor's key is kept.
    public enum Backing: Sendable, Equatable {
        /// The OS keyring (Secret Service).
        case keyring
        /// Sealed by the TPM, in ``SecuredKeyEncryptor/tpmKeyDirectory``.
        case tpm
    }

    /// The alias used when none is given.
    public static var defaultKeyAlias: String { "org.coffer.secured-key" }

    /// Where TPM-sealed keys are kept: `keys/` in ``DataDirectory/default``.
    public static var tpmKeyDirectory: URL {
        DataDirectory.default.appendingPathComponent("keys", isDirectory: true)
    }

    /// The alias of the key.
    public var keyAlias: String { sealer.keyAlias }

    /// Where the key is kept.
    public let backing: Backing

    let sealer: AESGCMEncryptor

    /// An encryptor with the default key alias, or `nil` when no key can be kept safely here.
    public init?() {
        self.init(keyAlias: Self.defaultKeyAlias)
    }

    /// An encryptor with `keyAlias`, or `nil` when no key can be kept safely here.
    public init?(keyAlias: String) {
        guard let made = try? Self.make(keyAlias: keyAlias) else { return nil }
        self = made
    }

    private init(sealer: AESGCMEncryptor, backing: Backing) {
        self.sealer = sealer
        self.backing = backing
    }

    /// This encryptor, except that it never makes a key (``AESGCMEncryptor``'s
    /// `sealingOnlyUnderExistingKeys()`).
    package func sealingOnlyUnderExistingKeys() -> SecuredKeyEncryptor {
        SecuredKeyEncryptor(sealer: sealer.sealingOnlyUnderExistingKeys(), backing: backing)
    }

    /// An encryptor with `keyAlias`, or the reason the keyring cannot be used when no TPM can be
    /// either.
    ///
    /// - Parameters:
    ///   - keyAlias: The alias of the key (the keyring item's, or the TPM-sealed file's name).
    ///   - timeout: How long each key lookup may take later, in the keyring or the TPM. The
    ///     default is ``SecretService/defaultTimeout`` (`COFFER_KEYRING_TIMEOUT`, else 10 seconds),
    ///     which therefore also bounds a TPM-sealed key's lookups.
    ///   - checkTimeout: How long each availability check may block the caller.
    public static func make(
        keyAlias: String = defaultKeyAlias, timeout: Duration = SecretService.defaultTimeout, checkTimeout: Duration = .seconds(3)
    ) throws(KeychainError) -> SecuredKeyEncryptor {
        let tpmStore = TPMKeyStore(directory: tpmKeyDirectory, tpm: .fromEnvironment(timeout: timeout))
        if tpmKeyFileExists(tpmStore, keyAlias) {
            return SecuredKeyEncryptor(sealer: AESGCMEncryptor(keyAlias: keyAlias, keyStore: tpmStore), backing: .tpm)
        }
        if let problem = SecretService(timeout: checkTimeout).usabilityProblem() {
            guard TrustedPlatformModule.fromEnvironment().usabilityProblem(timeout: checkTimeout) == nil else { throw problem }
            return SecuredKeyEncryptor(sealer: AESGCMEncryptor(keyAlias: keyAlias, keyStore: tpmStore), backing: .tpm)
        }
        return SecuredKeyEncryptor(sealer: AESGCMEncryptor(
            keyAlias: keyAlias, keyStore: SecretServiceKeyStore(timeout: timeout)), backing: .keyring)
    }

    /// Whether a TPM-sealed file for `alias` is there, readable or not (a damaged or foreign
    /// file still means the key is the TPM's: never a fall back).
    private static func tpmKeyFileExists(_ store: TPMKeyStore, _ alias: String) -> Bool {
        guard let url = try? store.fileURL(for: alias) else { return false }
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    public func encrypt(data: Data) async throws -> Data {
        try await sealer.encrypt(data: data)
    }

    public func decrypt(data: Data) async throws -> Data {
        try await sealer.decrypt(data: data)
    }

    /// Makes a new primary key; data sealed before still opens.
    @discardableResult
    public func rotateKey() async throws -> UInt32 {
        try await sealer.rotateKey()
    }
}
