import Foundation

/// Why Ping's label helpers refused a URI.
public enum UriParseError: Error, LocalizedError, Sendable {
    /// The `issuer` parameter and the label's issuer differ.
    case issuerMismatch(parameterIssuer: String, labelIssuer: String)
    /// The URI is not well formed; the payload says why (Coffer never puts the URI itself here:
    /// it may carry a secret).
    case malformedURI(String)
    /// The scheme is not one of ``UriScheme``.
    case unsupportedScheme(String)

    /// What is wrong, with the values involved (issuers and schemes are not secret).
    public var errorDescription: String? {
        switch self {
        case let .issuerMismatch(parameterIssuer, labelIssuer):
            "The issuer parameter '\(parameterIssuer)' does not match the label's issuer '\(labelIssuer)'"
        case .malformedURI(let uri): "Malformed URI: \(uri)"
        case .unsupportedScheme(let scheme): "Unsupported URI scheme: \(scheme)"
        }
    }
}
