import CofferStorage
import Foundation

/// Why an OpenID Connect call failed, with Ping's cases and words.
///
/// Coffer's additions are in ``recoverySuggestion``; no case carries a token, a code, a
/// verifier or a client secret, and a server's answer is kept to its first 500 characters with
/// control characters escaped.
public enum OidcError: LocalizedError, Sendable {
    /// The authorization failed (no agent, no code, the agent's own error).
    case authorizeError(cause: Error? = nil, message: String? = nil)
    /// The network failed, or there is no HTTP client.
    case networkError(cause: Error? = nil, message: String? = nil)
    /// The server answered with an error status; `message` is its answer.
    case apiError(code: Int, message: String)
    /// Anything else.
    case unknown(cause: Error? = nil, message: String? = nil)

    /// Ping's message: `Authorization error: …`, `Network error: …`, `API error: <code> <message>`, `Error: …`.
    public var errorMessage: String {
        switch self {
        case let .authorizeError(cause, message): "Authorization error: \(message ?? cause?.localizedDescription ?? "Unknown")"
        case let .networkError(cause, message): "Network error: \(message ?? cause?.localizedDescription ?? "Unknown")"
        case let .apiError(code, message): "API error: \(code) \(message)"
        case let .unknown(cause, message): "Error: \(message ?? cause?.localizedDescription ?? "Unknown")"
        }
    }

    /// The same as ``errorMessage``.
    public var errorDescription: String? { errorMessage }

    /// What to do about it.
    public var recoverySuggestion: String? {
        switch self {
        case .apiError(let code, _) where code == 400 || code == 401:
            "The provider refused the request: the session may have ended (sign in again) or the client is not registered as configured."
        case .apiError: "The provider answered with an error; try again later, or check the discovery endpoint."
        case .networkError: "Check the network and the provider's address."
        case .authorizeError: "Sign in again."
        case .unknown: nil
        }
    }

    /// A server's answer as an error message may carry it: at most 500 characters, control
    /// characters escaped so it cannot act on a terminal.
    static func answer(_ data: Data) -> String {
        TerminalText.escaped(String(String(decoding: data.prefix(2000), as: UTF8.self).prefix(500)))
    }
}
