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
