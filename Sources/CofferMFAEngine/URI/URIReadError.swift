import Foundation

/// Why a `otpauth://`, `pushauth://` or `mfauth://` URI was refused. Each case names what to fix;
/// none quotes a secret.
package enum URIReadError: Error, Sendable, Equatable {
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

extension URIReadError: LocalizedError {
    /// What is wrong with the URI, naming the parameter or part; never the secret. A scheme, type
    /// or parameter name is quoted only when it is one authenticator URIs use: anything else
    /// may be a secret pasted in the wrong place, so it is described, not repeated.
    package var errorDescription: String? {
        switch self {
        case .malformed(let reason): return "The URI is malformed: \(reason)."
        case .unsupportedScheme(let scheme):
            let named = Self.knownWords.contains(scheme) ? "scheme '\(scheme)'" : "scheme"
            return "The URI \(named) is not supported; use otpauth://, pushauth:// or mfauth://."
        case .unsupportedType(let type):
            let named = Self.knownWords.contains(type) ? "type '\(type)'" : "type (after the scheme)"
            return "The URI \(named) is not supported here (expected totp, hotp or push)."
        case .missingParameter(let name): return "The URI has no '\(name)' parameter, which is required."
        case let .invalidParameter(name, reason):
            let named = Self.knownWords.contains(name) ? "The URI's '\(name)' parameter" : "A parameter of the URI Coffer does not use"
            return "\(named) is invalid: \(reason)."
        case let .tooLong(length, limit): return "The URI is \(length) characters long; at most \(limit) are accepted."
        }
    }

    /// Schemes, types and parameter names of authenticator URIs, which messages may quote.
    static let knownWords: Set<String> = [
        "otpauth", "otpauth-migration", "pushauth", "mfauth", "steam", "http", "https", "motp", "yandex",
        "totp", "hotp", "push", "oath",
        "secret", "issuer", "algorithm", "digits", "period", "counter", "image", "b", "policies", "uid", "oid", "pid",
        "version", "encoder", "label", "r", "a", "s", "c", "l", "m",
    ]
}

extension URIReadError: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The ``errorDescription``, so that printing the error never repeats what it does not quote.
    package var description: String { errorDescription ?? "The URI cannot be used." }

    /// The same as ``description``.
    package var debugDescription: String { description }

    /// Only ``description``, so `dump(_:)` and the debugger show no more than the message.
    package var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
