@testable import CofferOidc
import CofferStorage
import Crypto
import CryptoExtras
import Foundation
import JWTKit
import Testing

/// ID tokens made here, with keys made here: ES256 accepted with its key, and each claim's check.
@Suite("ID token validation")
struct IdTokenTests {
    static let expected = IdTokenValidator.Expected(issuer: "https://id.example", clientId: "app", nonce: "n-1")
    static let now: Int64 = 1_800_000_000

    static func claims(iss: String = "https://id.example", aud: [String] = ["app"], azp: String? = nil, exp: Int64 = now + 300,
                       iat: Int64 = now, nonce: String? = "n-1", sub: String = "alice") -> IdTokenValidator.Claims {
        IdTokenValidator.Claims(iss: iss, sub: sub, aud: AudienceClaim(value: aud), exp: exp, iat: iat, nonce: nonce, azp: azp)
    }

    /// An ES256 key pair: the private key's collection (to sign) and the public key set.
    static func ecKeys(kid: String) async throws -> (JWTKeyCollection, JWKS) {
        let key = ES256PrivateKey()
        let signer = await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: kid))
        let (x, y) = try #require(key.publicKey.parameters)
        return (signer, JWKS(keys: [JWK.ecdsa(.es256, identifier: JWKIdentifier(string: kid), x: x, y: y, curve: .p256)]))
    }

    func validate(_ token: String, _ keys: ProviderKeys, expected: IdTokenValidator.Expected = expected) async throws(IdTokenError) {
        try await IdTokenValidator.validate(token, expected: expected, keys: keys, config: OidcClientConfig(), now: Date(timeIntervalSince1970: Double(Self.now)))
    }

    @Test("ES256 signed by the provider's key is accepted; the same claims signed by another EC key are not")
    func es256() async throws {
        let (signer, set) = try await Self.ecKeys(kid: "ec-1")
        let keys = try await ProviderKeys(keySet: set)
        try await validate(try await signer.sign(Self.claims(), kid: JWKIdentifier(string: "ec-1")), keys)
        let (other, _) = try await Self.ecKeys(kid: "ec-1")
        await #expect(throws: IdTokenError.signature) { try await validate(try await other.sign(Self.claims(), kid: JWKIdentifier(string: "ec-1")), keys) }
    }

    @Test("every claim is checked: issuer, audience, azp, expiry and issue time with 60 s of skew, nonce, subject after a refresh")
    func claimChecks() throws {
        let check = { (claims: IdTokenValidator.Claims, expected: IdTokenValidator.Expected) throws(IdTokenError) in
            try IdTokenValidator.check(claims, expected: expected, now: Self.now)
        }
        try check(Self.claims(), Self.expected)
        #expect(throws: IdTokenError.issuer) { try check(Self.claims(iss: "https://id.example/"), Self.expected) }
        #expect(throws: IdTokenError.audience) { try check(Self.claims(aud: ["other"]), Self.expected) }
        #expect(throws: IdTokenError.audience) { try check(Self.claims(aud: ["app", "other"]), Self.expected) }
        try check(Self.claims(aud: ["app", "other"], azp: "app"), Self.expected)
        #expect(throws: IdTokenError.audience) { try check(Self.claims(azp: "other"), Self.expected) }
        try check(Self.claims(exp: Self.now - 59), Self.expected)
        #expect(throws: IdTokenError.expired) { try check(Self.claims(exp: Self.now - 61), Self.expected) }
        try check(Self.claims(iat: Self.now + 59), Self.expected)
        #expect(throws: IdTokenError.issuedInFuture) { try check(Self.claims(iat: Self.now + 61), Self.expected) }
        #expect(throws: IdTokenError.nonce) { try check(Self.claims(nonce: "n-2"), Self.expected) }
        #expect(throws: IdTokenError.nonce) { try check(Self.claims(nonce: nil), Self.expected) }
        var refreshed = Self.expected
        refreshed.nonce = nil
        refreshed.subject = "alice"
        try check(Self.claims(nonce: nil), refreshed)
        #expect(throws: IdTokenError.subjectChanged) { try check(Self.claims(nonce: nil, sub: "mallory"), refreshed) }
    }

    @Test("alg none and HMAC are refused before any key is tried; a key published for ES256 does not verify RS256")
    func algorithms() async throws {
        let (signer, set) = try await Self.ecKeys(kid: "ec-1")
        let keys = try await ProviderKeys(keySet: set)
        let valid = try await signer.sign(Self.claims(), kid: JWKIdentifier(string: "ec-1"))
        let parts = valid.split(separator: ".")
        func header(_ json: String) -> String { Pkce.base64URL(Data(json.utf8)) }
        await #expect(throws: IdTokenError.algorithm("none")) {
            try await validate(header(#"{"alg":"none","kid":"ec-1"}"#) + "." + parts[1] + ".", keys)
        }
        // HMAC keyed with the public key, which anyone can fetch from jwks_uri.
        let publicKey = Data(try JSONEncoder().encode(set).utf8String.utf8)
        let forgedHeader = header(#"{"alg":"HS256","kid":"ec-1"}"#)
        let mac = HMAC<SHA256>.authenticationCode(for: Data((forgedHeader + "." + parts[1]).utf8), using: SymmetricKey(data: publicKey))
        await #expect(throws: IdTokenError.algorithm("HS256")) {
            try await validate(forgedHeader + "." + parts[1] + "." + Pkce.base64URL(Data(mac)), keys)
        }
        await #expect(throws: IdTokenError.algorithm("RS256")) {
            try await validate(header(#"{"alg":"RS256","kid":"ec-1"}"#) + "." + parts[1] + "." + parts[2], keys)
        }
        await #expect(throws: IdTokenError.malformed) { try await validate("not.a.jwt", keys) }
        await #expect(throws: IdTokenError.malformed) { try await validate("a.b", keys) }
        #expect(!"\(IdTokenError.signature)".isEmpty && "\(IdTokenError.algorithm("none"))".contains("'none'"))
    }
}

private extension Data {
    var utf8String: String { String(decoding: self, as: UTF8.self) }
}
