import Foundation

/// Why an ID token was refused (OpenID Connect Core §3.1.3.7). Refused tokens are never stored.
public enum IdTokenError: Error, Sendable, Equatable {
    /// Not a JWS in compact form, or its header or claims cannot be read.
    case malformed
    /// An algorithm Coffer does not accept: `none`, HMAC (which would let anyone holding the
    /// provider's *public* key sign), or one the provider's key is not for.
    case algorithm(String)
    /// The provider's keys (`jwks_uri`) could not be fetched or read.
    case keys(String)
    /// No key of the provider's verifies the signature.
    case signature
    /// `iss` is not the provider's issuer.
    case issuer
    /// `aud` does not name this client, or names others without `azp` naming this one.
    case audience
    /// `exp` has passed (beyond the allowed clock skew).
    case expired
    /// `iat` is in the future (beyond the allowed clock skew).
    case issuedInFuture
    /// `nonce` is not the one sent with the authorization request.
    case nonce
    /// A refreshed ID token names another subject than the session's.
    case subjectChanged

    /// What went wrong, for a person.
    public var message: String {
        switch self {
        case .malformed: "it is not a signed JWT that can be read"
        case .algorithm(let name): "it is signed with \(name.isEmpty ? "no algorithm" : "'\(name.prefix(20))'"), which is not accepted (only RS*, PS*, ES* and EdDSA with the provider's keys)"
        case .keys(let reason): "the provider's signing keys could not be read: \(reason)"
        case .signature: "its signature is not made by any of the provider's keys"
        case .issuer: "it was issued by another issuer than the provider's"
        case .audience: "it is meant for another client"
        case .expired: "it has expired"
        case .issuedInFuture: "it is issued in the future (check this machine's clock)"
        case .nonce: "its nonce is not the one this sign-in sent"
        case .subjectChanged: "it names another user than the session's"
        }
    }
}

extension IdTokenError: CustomStringConvertible, LocalizedError {
    /// ``message``.
    public var description: String { "The ID token was refused: \(message)" }
    /// The same as ``description``.
    public var errorDescription: String? { description }
}
