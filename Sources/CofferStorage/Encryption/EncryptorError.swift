import Foundation

/// Why sealing or opening data failed.
///
/// Coffer's encryptors always give the cause. An encryptor of your own may throw the bare
/// ``failedToEncrypt`` / ``failedToDecrypt`` (as Ping's examples do), and code that catches
/// either spelling matches both:
///
/// ```swift
/// struct MyEncryptor: Encryptor {
///     func encrypt(data: Data) async throws -> Data { throw EncryptorError.failedToEncrypt }
///     func decrypt(data: Data) async throws -> Data { throw EncryptorError.failedToDecrypt }
/// }
/// ```
public enum EncryptorError: Error, Sendable {
    /// Sealing failed; `cause`, when given, says why (for example the key store could not be
    /// reached).
    case failedToEncrypt(cause: (any Error)?)
    /// Opening failed; `cause`, when given, says why. No bytes are returned when this is thrown.
    case failedToDecrypt(cause: (any Error)?)

    /// Sealing failed, for a reason the encryptor does not give.
    public static var failedToEncrypt: EncryptorError { .failedToEncrypt(cause: nil) }
    /// Opening failed, for a reason the encryptor does not give.
    public static var failedToDecrypt: EncryptorError { .failedToDecrypt(cause: nil) }

    /// The message a person reads (the same as `errorDescription`), under the name Ping's SDK
    /// gives it.
    public var errorMessage: String { description }
}

/// The specific reasons behind an ``EncryptorError``.
public enum EnvelopeError: Error, Sendable, Equatable {
    /// The data is shorter than the smallest possible envelope.
    case truncated(length: Int)
    /// The data does not start with Coffer's envelope magic: it is not a sealed envelope.
    case notAnEnvelope
    /// The envelope was written by a newer format version than this build understands.
    case unsupportedVersion(UInt8)
    /// The envelope names a key id the key store does not hold.
    case unknownKey(alias: String, keyID: UInt32)
    /// The authentication tag did not verify: wrong key, or the data was changed.
    case authenticationFailed
    /// The key store holds no key for `alias` to seal with, and the encryptor was told to make
    /// none: the key was removed or moved away since the data it keeps was sealed.
    case noKeyToSealWith(alias: String)
}

extension EncryptorError: LocalizedError {
    /// What went wrong and what to do; never the plaintext, the ciphertext or a key.
    public var errorDescription: String? {
        switch self {
        case .failedToEncrypt(let cause):
            return "Could not encrypt the data" + describe(cause)
        case .failedToDecrypt(let cause):
            return "Could not decrypt the data" + describe(cause)
        }
    }

    private func describe(_ error: (any Error)?) -> String {
        guard let error else { return " (the encryptor gave no reason)" }
        return ": " + ((error as? LocalizedError)?.errorDescription ?? String(describing: error))
    }
}

extension EncryptorError: CustomStringConvertible {
    /// The same text as ``errorDescription``, so `print(error)` and string interpolation read well.
    public var description: String { errorDescription ?? "EncryptorError" }
}

extension EnvelopeError: LocalizedError {
    /// What is wrong with the envelope (its version, its length, its key id); never its contents.
    public var errorDescription: String? {
        switch self {
        case .truncated(let length):
            return "the sealed data is \(length) bytes, too short to be an envelope; it was truncated or damaged"
        case .notAnEnvelope:
            return "the data is not a Coffer envelope (wrong magic bytes); it was damaged or written by something else"
        case .unsupportedVersion(let version):
            return "the envelope uses format version \(version), which this version of Coffer does not know; upgrade Coffer"
        case let .unknownKey(alias, keyID):
            return "the key store has no key \(keyID) for '\(alias)'; the key was deleted or the data comes from another key store"
        case .authenticationFailed:
            return "authentication failed: the data was changed, or it was sealed with a different key"
        case .noKeyToSealWith(let alias):
            return "the key store no longer holds a key for '\(alias)', and a new one would leave the data under two keys; "
                + "restore the key (coffer doctor says where it should be)"
        }
    }
}
