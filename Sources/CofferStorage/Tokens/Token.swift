import Foundation

/// An OAuth 2.0 / OpenID Connect token set, as a token endpoint returns it.
///
/// Encodes with the wire names (`access_token`, `token_type`, `scope`, `expires_in`,
/// `refresh_token`, `id_token`, `expires_at`); also decodes `expireAt`, the name older SDKs
/// wrote. When neither is present, the expiry is computed from `expires_in` at decoding time;
/// when `expires_in` is missing too (a provider need not send it, GitHub's OAuth apps do not),
/// the expiry is unknown: ``expiresAt`` is `Int64.max`, ``hasKnownExpiry`` is `false` and
/// ``isExpired`` is `false` — the token is used until the resource server refuses it. Such a
/// token encodes as `expires_at: 9223372036854775807` and reads back the same.
///
/// `description`, `debugDescription` and `dump` never show the token values.
public struct Token: Codable, Sendable, Hashable {
    /// The access token.
    public var accessToken: String
    /// The token type, usually `Bearer`.
    public var tokenType: String?
    /// The granted scopes, space separated.
    public var scope: String?
    /// Lifetime in seconds, as issued.
    public var expiresIn: Int64
    /// The refresh token, if one was issued.
    public var refreshToken: String?
    /// The ID token, if one was issued.
    public var idToken: String?
    /// When the access token expires, in seconds since 1970.
    public var expiresAt: Int64

    /// Creates a token. `expiresAt` defaults to now plus `expiresIn`.
    public init(
        accessToken: String,
        tokenType: String? = nil,
        scope: String? = nil,
        expiresIn: Int64,
        refreshToken: String? = nil,
        idToken: String? = nil,
        expiresAt: Int64? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.scope = scope
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        // Saturating: a hostile `expires_in` near Int64.max must not overflow (and crash).
        let (sum, overflow) = Int64(Date().timeIntervalSince1970).addingReportingOverflow(expiresIn)
        self.expiresAt = expiresAt ?? (overflow ? (expiresIn > 0 ? .max : .min) : sum)
    }

    /// Whether the access token has expired now.
    public var isExpired: Bool { isExpired(threshold: 0) }

    /// Whether the access token expires within `threshold` seconds from now (already expired
    /// counts). Use a threshold to refresh a little early.
    public func isExpired(threshold: Int64) -> Bool {
        isExpired(threshold: threshold, now: Date())
    }

    /// Whether the access token expires within `threshold` seconds of `now`; never for a token
    /// whose expiry is unknown (``hasKnownExpiry``).
    public func isExpired(threshold: Int64 = 0, now: Date) -> Bool {
        guard hasKnownExpiry else { return false }
        let (limit, overflow) = Int64(now.timeIntervalSince1970).addingReportingOverflow(threshold)
        return overflow ? threshold > 0 : limit >= expiresAt
    }

    /// Whether the token's expiry is known: `false` when the provider sent neither `expires_in`
    /// nor an expiry (``expiresAt`` is then `Int64.max`).
    public var hasKnownExpiry: Bool { expiresAt != .max }

    private enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case scope
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case expiresAt = "expires_at"
        case legacyExpireAt = "expireAt"
    }

    /// Decodes a token as the spec's JSON spells it (`access_token`, `expires_in`, …), also reading
    /// `expireAt`, the field name of earlier SDK versions, when `expires_at` is missing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let lifetime = try container.decodeIfPresent(Int64.self, forKey: .expiresIn)
        let expiresIn = lifetime ?? 0
        let expiresAt = try container.decodeIfPresent(Int64.self, forKey: .expiresAt)
            ?? container.decodeIfPresent(Int64.self, forKey: .legacyExpireAt)
            ?? (lifetime == nil ? Int64.max : nil)
        self.init(
            accessToken: try container.decode(String.self, forKey: .accessToken),
            tokenType: try container.decodeIfPresent(String.self, forKey: .tokenType),
            scope: try container.decodeIfPresent(String.self, forKey: .scope),
            expiresIn: expiresIn,
            refreshToken: try container.decodeIfPresent(String.self, forKey: .refreshToken),
            idToken: try container.decodeIfPresent(String.self, forKey: .idToken),
            expiresAt: expiresAt)
    }

    /// Encodes the token as the spec's JSON spells it (`access_token`, `expires_at`, …).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accessToken, forKey: .accessToken)
        try container.encodeIfPresent(tokenType, forKey: .tokenType)
        try container.encodeIfPresent(scope, forKey: .scope)
        try container.encode(expiresIn, forKey: .expiresIn)
        try container.encodeIfPresent(refreshToken, forKey: .refreshToken)
        try container.encodeIfPresent(idToken, forKey: .idToken)
        try container.encode(expiresAt, forKey: .expiresAt)
    }
}

extension Token: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The token's type, scope and expiry; the access, refresh and ID tokens show only as
    /// `<redacted>` (or `nil`), so a token can be logged safely.
    public var description: String {
        "Token(type: \(tokenType ?? "nil"), scope: \(scope ?? "nil"), expiresAt: \(expiresAt), "
            + "accessToken: <redacted>, refreshToken: \(refreshToken == nil ? "nil" : "<redacted>"), "
            + "idToken: \(idToken == nil ? "nil" : "<redacted>"))"
    }

    /// The same as ``description``: the tokens stay redacted in the debugger and in `debugPrint`.
    public var debugDescription: String { description }

    /// A mirror without the access, refresh or ID token, so `dump(_:)` and the debugger cannot
    /// reveal them.
    public var customMirror: Mirror {
        Mirror(self, children: ["tokenType": tokenType as Any, "scope": scope as Any, "expiresAt": expiresAt,
                                "accessToken": "<redacted>"])
    }
}
