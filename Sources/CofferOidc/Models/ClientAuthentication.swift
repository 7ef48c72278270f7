import CofferOrchestrate
import Foundation

/// How the client proves who it is at the token, revocation and device authorization
/// endpoints (OpenID Connect Core §9; RFC 6749 §2.3.1).
///
/// A public client (an app on the user's machine, Ping's only kind) has no secret and sends
/// its `client_id` alone; a confidential one (a server, a tool given a secret) sends its secret
/// in an `Authorization: Basic` header or in the form. The secret appears in no `description`,
/// `dump`, log line or error.
public enum ClientAuthentication: Sendable {
    /// A public client: `client_id` only (with PKCE).
    case none
    /// `client_secret_basic`: the id and secret, form-encoded, in an `Authorization: Basic` header.
    case clientSecretBasic(secret: String)
    /// `client_secret_post`: the secret as `client_secret` in the form.
    case clientSecretPost(secret: String)

    /// The method's name in a discovery document (`none`, `client_secret_basic`, `client_secret_post`).
    public var methodName: String {
        switch self {
        case .none: "none"
        case .clientSecretBasic: "client_secret_basic"
        case .clientSecretPost: "client_secret_post"
        }
    }

    /// Adds the client's credentials to `request`, whose form is `form`.
    func apply(to request: Request, clientId: String, form: inout [String: String]) {
        switch self {
        case .none:
            break
        case .clientSecretBasic(let secret):
            // RFC 6749 §2.3.1: each part form-encoded before they are joined.
            let pair = Request.formEscaped(clientId) + ":" + Request.formEscaped(secret)
            request.header(name: Request.Constants.authorization, value: "Basic " + Data(pair.utf8).base64EncodedString())
        case .clientSecretPost(let secret):
            form["client_secret"] = secret
        }
    }
}

extension ClientAuthentication: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The method's name, never the secret.
    public var description: String { "ClientAuthentication(\(methodName))" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// Only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
