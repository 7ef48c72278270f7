import Foundation

/// Seals data with AES-256-GCM under a key kept in the OS keyring (``SecretServiceKeyStore``).
///
/// The spec's secure default: `SecuredKeyEncryptor()` returns an encryptor when the Secret Service
/// is usable here (libsecret present, a provider on the session bus, the default collection
/// unlocked) and `nil` otherwise, so
///
/// ```swift
/// let encryptor = SecuredKeyEncryptor() ?? NoEncryptor()
/// ```
///
/// picks the best available. ``make(keyAlias:timeout:checkTimeout:)`` says why it cannot.
///
/// The initializers check the keyring synchronously: they block the calling thread for as long
/// as that takes: about a millisecond on a working keyring, at most 3 seconds (plus a short grace
/// period) on one that does not answer.
public struct SecuredKeyEncryptor: Encryptor {
    /// The alias used when none is given.
    public static var defaultKeyAlias: String { "org.coffer.secured-key" }

    /// The alias of the key in the keyring.
    public var keyAlias: String { sealer.keyAlias }

    let sealer: AESGCMEncryptor

    /// An encryptor with the default key alias, or `nil` when the keyring cannot be used.
    public init?() {
        self.init(keyAlias: Self.defaultKeyAlias)
    }

    /// An encryptor with `keyAlias`, or `nil` when the keyring cannot be used.
    public init?(keyAlias: String) {
        guard let made = try? Self.make(keyAlias: keyAlias) else { return nil }
        self = made
    }

    private init(sealer: AESGCMEncryptor) {
        self.sealer = sealer
    }

    /// An encryptor with `keyAlias`, or the reason the keyring cannot be used.
    ///
    /// - Parameters:
    ///   - keyAlias: The keyring item's alias that holds the key.
    ///   - timeout: How long each key lookup may take later.
    ///   - checkTimeout: How long the availability check may block the caller.
    public static func make(
        keyAlias: String = defaultKeyAlias, timeout: Duration = .seconds(10), checkTimeout: Duration = .seconds(3)
    ) throws(KeychainError) -> SecuredKeyEncryptor {
        if let problem = SecretService(timeout: checkTimeout).usabilityProblem() { throw problem }
        return SecuredKeyEncryptor(sealer: AESGCMEncryptor(
            keyAlias: keyAlias, keyStore: SecretServiceKeyStore(timeout: timeout)))
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
