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

    /// What an error answer may say in a message: an OAuth error's `error` and
    /// `error_description` (RFC 6749 §5.2), at most 200 characters each, control characters
    /// escaped; never the rest of the body, which a broken provider may fill with tokens or the
    /// form it was sent.
    static func answer(_ data: Data) -> String {
        guard let object = (try? JSONSerialization.jsonObject(with: data.prefix(65_536))) as? [String: Any],
              let code = object["error"] as? String else {
            return "the provider's answer is not an OAuth error (\(data.count) bytes, not shown)"
        }
        let shown = { (text: String) in TerminalText.escaped(String(text.prefix(200))) }
        return (object["error_description"] as? String).map { "\(shown(code)): \(shown($0))" } ?? shown(code)
    }
}

extension OidcError: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The ``errorMessage``: the cause's own fields (a failing URL's query, say) are not shown.
    public var description: String { errorMessage }
    /// The same as ``description``.
    public var debugDescription: String { errorMessage }
    /// Only ``description``, so `dump(_:)` shows no more than the message.
    public var customMirror: Mirror { Mirror(self, children: ["description": errorMessage]) }
}
