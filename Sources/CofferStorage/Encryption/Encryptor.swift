import Foundation

/// Turns plaintext into ciphertext and back.
///
/// Storage backends call an encryptor on the serialised value before it leaves memory and after it
/// comes back. Write your own to use a different algorithm or key source:
///
/// ```swift
/// struct MyEncryptor: Encryptor {
///     func encrypt(data: Data) async throws -> Data { ... }
///     func decrypt(data: Data) async throws -> Data { ... }
/// }
/// ```
///
/// `decrypt` must throw when the input was not produced by `encrypt` with the same key; it must
/// never return unauthenticated bytes.
public protocol Encryptor: Sendable {
    /// Seals `data`.
    func encrypt(data: Data) async throws -> Data
    /// Opens data sealed by ``encrypt(data:)``, or throws.
    func decrypt(data: Data) async throws -> Data
}

/// An encryptor that does nothing: data is stored as it is.
///
/// The default for ``KeychainStorage``-style backends that rely on the store itself for
/// protection, and the spec's fallback in `SecuredKeyEncryptor() ?? NoEncryptor()`.
public struct NoEncryptor: Encryptor {
    /// Creates the pass-through encryptor.
    public init() {}

    /// Returns `data` unchanged.
    public func encrypt(data: Data) async throws -> Data { data }

    /// Returns `data` unchanged.
    public func decrypt(data: Data) async throws -> Data { data }
}

/// An encryptor that can open data without suspending when it already holds the key that
/// sealed it: ``AESGCMEncryptor`` and ``SecuredKeyEncryptor``. Synchronous callers (the
/// `StorageClient` protocol) open through it and go to the async ``Encryptor/decrypt(data:)``
/// only for a key not fetched yet.
package protocol KnownKeyOpening: Encryptor {
    /// `data` opened, or `nil` when opening it needs a key not fetched yet. Throws as
    /// ``Encryptor/decrypt(data:)`` throws for data that does not open.
    func decryptUnderKnownKey(data: Data) throws(EncryptorError) -> Data?
}

extension AESGCMEncryptor: KnownKeyOpening {}

extension SecuredKeyEncryptor: KnownKeyOpening {
    package func decryptUnderKnownKey(data: Data) throws(EncryptorError) -> Data? {
        try sealer.decryptUnderKnownKey(data: data)
    }
}
