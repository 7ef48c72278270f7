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
    /// Whether the provider puts `iss` in every authorization response (RFC 9207): then a
    /// response without it is refused, as a mix-up attack's would be.
    public let authorizationResponseIssParameterSupported: Bool

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
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
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
        // A provider that writes it as a string ("true") means it too: read leniently, never off by mistake.
        authorizationResponseIssParameterSupported =
            (try? container.decodeIfPresent(Bool.self, forKey: .authorizationResponseIssParameterSupported))
            ?? (try? container.decodeIfPresent(String.self, forKey: .authorizationResponseIssParameterSupported))
                .map { $0?.lowercased() == "true" } ?? false
    }
}

extension OpenIdConfiguration {
    /// Why an authorization response whose `iss` is `iss` (`nil` without one) cannot be this
    /// provider's (RFC 9207: another issuer, or none when the provider always names itself),
    /// or `nil` when it can.
    func redirectIssuerProblem(_ iss: String?) -> String? {
        if let iss, iss != issuer {
            return "The redirect came from another issuer than the provider's (RFC 9207); nothing was exchanged"
        }
        if iss == nil, authorizationResponseIssParameterSupported {
            return "The redirect did not name its issuer, which the provider always does (RFC 9207); nothing was exchanged"
        }
        return nil
    }
}
