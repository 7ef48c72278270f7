import Foundation
import JWTKit
import Synchronization

/// Checks an ID token as OpenID Connect Core §3.1.3.7 says, before a session is stored: the
/// signature against the provider's keys (`jwks_uri`), `iss`, `aud` and `azp`, `exp` and `iat`
/// with a small clock skew, and the `nonce` sent. JOSE itself is jwt-kit's.
///
/// Refused outright, whatever key the header names: `alg: none`, and HMAC (`HS256`…), whose
/// "key" would be the provider's public key that anyone can fetch.
struct IdTokenValidator: Sendable {
    /// The clock skew allowed on `exp` and `iat`.
    static let skew: Int64 = 60
    /// The algorithms accepted, each only with a key of its kind.
    static let accepted: Set<String> = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]

    /// What the token must say.
    struct Expected: Sendable {
        var issuer: String
        var clientId: String
        /// The nonce sent with the authorization request; `nil` after a refresh or a device grant.
        var nonce: String?
        /// The session's subject, after a refresh.
        var subject: String?
    }

    /// The claims Coffer checks.
    struct Claims: JWTPayload {
        let iss: String?
        let sub: String?
        let aud: AudienceClaim?
        let exp: Int64?
        let iat: Int64?
        let nonce: String?
        let azp: String?

        /// Checked by ``IdTokenValidator/validate(_:expected:keys:config:now:)`` instead, with its clock.
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The header fields read before any key is chosen.
    private struct Header: Decodable {
        let alg: String?
        let kid: String?
    }

    /// Checks `token`; its claims when it holds.
    @discardableResult
    static func validate(_ token: String, expected: Expected, keys: ProviderKeys, config: OidcClientConfig, now: Date = Date()) async throws(IdTokenError) -> Claims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = base64URLDecoded(parts[0]),
              let header = try? JSONDecoder().decode(Header.self, from: headerData) else { throw .malformed }
        let algorithm = header.alg ?? ""
        guard accepted.contains(algorithm) else { throw .algorithm(algorithm) }
        let (collection, keyAlgorithm) = try await keys.keys(for: header.kid, config: config)
        // A key published for one algorithm signs with that one only.
        if let keyAlgorithm, keyAlgorithm != algorithm { throw .algorithm(algorithm) }
        let claims: Claims
        do {
            claims = try await collection.verify(token, as: Claims.self)
        } catch let error as JWTError where error.errorType == .malformedToken {
            throw .malformed
        } catch {
            throw .signature
        }
        try check(claims, expected: expected, now: Int64(now.timeIntervalSince1970))
        return claims
    }

    /// The claims' checks, in the order of OpenID Connect Core §3.1.3.7.
    static func check(_ claims: Claims, expected: Expected, now: Int64) throws(IdTokenError) {
        guard claims.iss == expected.issuer else { throw .issuer }
        let audiences = claims.aud?.value ?? []
        guard audiences.contains(expected.clientId) else { throw .audience }
        if let azp = claims.azp, azp != expected.clientId { throw .audience }
        if audiences.count > 1, claims.azp == nil { throw .audience }
        guard let exp = claims.exp, exp > now - skew else { throw .expired }
        guard let iat = claims.iat, iat <= now + skew else { throw .issuedInFuture }
        if let nonce = expected.nonce, claims.nonce != nonce { throw .nonce }
        if let subject = expected.subject, claims.sub != subject { throw .subjectChanged }
    }

    /// The claims of a token already accepted (a stored session's), read without checks.
    static func unverifiedClaims(of token: String) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = base64URLDecoded(parts[1]) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// The subject of a token already accepted, read without checks.
    static func subject(of token: String) -> String? {
        unverifiedClaims(of: token)?["sub"] as? String
    }

    static func base64URLDecoded(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

extension OidcClientConfig {
    /// Checks `token`'s ID token, when it has one and the provider publishes keys (every real
    /// provider does; Ping's test provider does not).
    ///
    /// - Parameters:
    ///   - nonce: the nonce sent with the authorization request, for a sign-in.
    ///   - previous: the session refreshed, whose subject the new ID token must name.
    /// - Throws: ``OidcError/authorizeError(cause:message:)`` with an ``IdTokenError`` cause.
    func acceptIdToken(of token: Token, nonce: String?, previous: Token? = nil, now: Date = Date()) async throws {
        guard let idToken = token.idToken, let openId else { return }
        guard let jwksUri = openId.jwksUri, !jwksUri.isEmpty else {
            guard requiresIdTokenValidation else { return }
            throw OidcError.authorizeError(cause: IdTokenError.keys("the discovery document names no jwks_uri"),
                                           message: "The ID token cannot be checked: the provider publishes no signing keys; nothing was stored")
        }
        let expected = IdTokenValidator.Expected(
            issuer: openId.issuer ?? "", clientId: clientId, nonce: nonce,
            subject: previous?.idToken.flatMap(IdTokenValidator.subject(of:)))
        do {
            try await IdTokenValidator.validate(idToken, expected: expected, keys: providerKeys, config: self, now: now)
        } catch {
            throw OidcError.authorizeError(cause: error, message: "\(error.description); nothing was stored")
        }
    }
}
