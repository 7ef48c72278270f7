import CofferStorage
import Foundation

/// How one named session reaches its provider: what `coffer login` was given, kept sealed beside
/// the session's tokens so that `coffer token` can refresh without being told again.
public struct OidcSessionSettings: Codable, Sendable, Equatable {
    /// The provider's issuer URL (`https://id.example.com/realms/work`).
    public var issuer: String
    /// The client's id at the provider.
    public var clientId: String
    /// The scopes asked for.
    public var scopes: [String]
    /// `client_secret_basic` or `client_secret_post` for a confidential client, `none` otherwise.
    public var authenticationMethod: String
    /// A confidential client's secret (sealed with the settings; never shown).
    public var clientSecret: String?

    /// Settings for a client.
    public init(issuer: String, clientId: String, scopes: [String], authenticationMethod: String = "none", clientSecret: String? = nil) {
        self.issuer = issuer
        self.clientId = clientId
        self.scopes = scopes
        self.authenticationMethod = authenticationMethod
        self.clientSecret = clientSecret
    }

    /// The discovery document's address: the issuer's `/.well-known/openid-configuration`
    /// (OpenID Connect Discovery §4), unless the issuer given already is one.
    public var discoveryEndpoint: String {
        if issuer.contains("/.well-known/") { return issuer }
        return (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    /// Why `issuer` cannot be a session's issuer, or `nil`: it must be an https URL (http only
    /// on this machine's loopback, 127.0.0.1 or ::1) without a user name, password, query or
    /// fragment, since the codes, verifiers, secrets and tokens go where its discovery document says.
    public static func issuerProblem(_ issuer: String) -> String? {
        guard let url = URLComponents(string: issuer), url.query == nil, url.fragment == nil, OidcClientConfig.isSafe(issuer) else {
            return "the issuer must be an https URL (http only on this machine's loopback, 127.0.0.1) without a user name, password, query or fragment"
        }
        return nil
    }

    /// The issuer identifier the discovery document must name: ``issuer`` without the
    /// discovery document's path, when that was given.
    public var issuerIdentifier: String {
        let suffix = "/.well-known/openid-configuration"
        return issuer.hasSuffix(suffix) ? String(issuer.dropLast(suffix.count)) : issuer
    }

    /// How the client authenticates, from ``authenticationMethod`` and ``clientSecret``.
    public var clientAuthentication: ClientAuthentication {
        guard let clientSecret else { return .none }
        return authenticationMethod == "client_secret_post" ? .clientSecretPost(secret: clientSecret) : .clientSecretBasic(secret: clientSecret)
    }
}

extension OidcSessionSettings: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The issuer, client and scopes; never the secret.
    public var description: String {
        "OidcSessionSettings(issuer: \(issuer), clientId: \(clientId), scopes: \(scopes.joined(separator: " ")), authentication: \(authenticationMethod))"
    }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// Only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

/// What can be said about a stored session without showing a token: `coffer sessions`.
public struct OidcSessionSummary: Sendable, Codable, Equatable {
    /// The session's name.
    public let name: String
    /// The provider's issuer.
    public let issuer: String
    /// The client's id.
    public let clientId: String
    /// The signed-in user (`sub` of the ID token), when there was one.
    public let subject: String?
    /// The scopes the provider granted (or, if it did not say, those asked for).
    public let scopes: [String]
    /// When the access token expires (seconds since 1970); `nil` when the provider did not say.
    public let expiresAt: Int64?
    /// Whether a refresh token is kept (without one, `token` must sign in again once it expires).
    public let canRefresh: Bool
}
