/// What a provider's discovery document (`/.well-known/openid-configuration`) says, with Ping's
/// five endpoints and the fields Coffer needs besides.
///
/// Ping's endpoints are required there; here one a provider does not offer (many have no
/// `end_session_endpoint`) reads as an empty string, and the calls that need it say so.
public struct OpenIdConfiguration: Codable, Sendable {
    /// The authorization endpoint.
    public let authorizationEndpoint: String
    /// The token endpoint.
    public let tokenEndpoint: String
    /// The userinfo endpoint.
    public let userinfoEndpoint: String
    /// The end-session (RP-initiated logout) endpoint.
    public let endSessionEndpoint: String
    /// The revocation endpoint (RFC 7009).
    public let revocationEndpoint: String
    /// PingOne's IdP-session end endpoint.
    public let pingEndsessionEndpoint: String?
    /// The issuer identifier, which ID tokens' `iss` must equal.
    public let issuer: String?
    /// Where the provider's signing keys are (JWKS).
    public let jwksUri: String?
    /// The device authorization endpoint (RFC 8628).
    public let deviceAuthorizationEndpoint: String?

    private enum CodingKeys: String, CodingKey {
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case pingEndsessionEndpoint = "ping_end_idp_session_endpoint"
        case issuer
        case jwksUri = "jwks_uri"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
    }

    /// Reads a discovery document; a missing endpoint of Ping's five is an empty string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func endpoint(_ key: CodingKeys) throws -> String { try container.decodeIfPresent(String.self, forKey: key) ?? "" }
        authorizationEndpoint = try endpoint(.authorizationEndpoint)
        tokenEndpoint = try endpoint(.tokenEndpoint)
        userinfoEndpoint = try endpoint(.userinfoEndpoint)
        endSessionEndpoint = try endpoint(.endSessionEndpoint)
        revocationEndpoint = try endpoint(.revocationEndpoint)
        pingEndsessionEndpoint = try container.decodeIfPresent(String.self, forKey: .pingEndsessionEndpoint)
        issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
        jwksUri = try container.decodeIfPresent(String.self, forKey: .jwksUri)
        deviceAuthorizationEndpoint = try container.decodeIfPresent(String.self, forKey: .deviceAuthorizationEndpoint)
    }
}
