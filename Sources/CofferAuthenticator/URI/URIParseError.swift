import Foundation

/// Why a `otpauth://`, `pushauth://` or `mfauth://` URI was refused. Each case names what to fix;
/// none quotes a secret.
public enum URIParseError: Error, Sendable, Equatable {
    /// The text is not a URI of the expected shape.
    case malformed(reason: String)
    /// The scheme is not `otpauth`, `pushauth` or `mfauth`.
    case unsupportedScheme(String)
    /// The type (the URI's host) is not one this scheme allows.
    case unsupportedType(String)
    /// A required parameter is absent.
    case missingParameter(String)
    /// A parameter is present but unusable.
    case invalidParameter(name: String, reason: String)
    /// The URI is longer than anything legitimate (a guard against hostile input).
    case tooLong(length: Int, limit: Int)
}

extension URIParseError: LocalizedError {
    /// What is wrong with the URI, naming the parameter or part; never the secret.
    public var errorDescription: String? {
        switch self {
        case .malformed(let reason): return "The URI is malformed: \(reason)."
        case .unsupportedScheme(let scheme):
            return "The URI scheme '\(scheme)' is not supported; use otpauth://, pushauth:// or mfauth://."
        case .unsupportedType(let type): return "The URI type '\(type)' is not supported here (expected totp, hotp or push)."
        case .missingParameter(let name): return "The URI has no '\(name)' parameter, which is required."
        case let .invalidParameter(name, reason): return "The URI's '\(name)' parameter is invalid: \(reason)."
        case let .tooLong(length, limit): return "The URI is \(length) characters long; at most \(limit) are accepted."
        }
    }
}
