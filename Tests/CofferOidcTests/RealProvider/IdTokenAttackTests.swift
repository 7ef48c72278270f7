@testable import CofferOidc
import CofferStorage
import CryptoExtras
import Foundation
import JWTKit
import TestSupport
import Testing

/// The provider's real ID tokens, and forgeries of them: another client's, one signed by another
/// key with the provider's key id, one with its claims changed, an expired one, one carrying
/// another nonce.
@Suite("ID tokens from the real provider", .enabled(if: TestProvider.isRunning, TestProvider.skipReason), .timeLimit(.minutes(3)))
struct IdTokenAttackTests {
    /// An agent that signs in through the loopback agent, then claims another nonce was sent:
    /// the ID token's nonce no longer matches, as with a token injected from another sign-in.
    struct NonceSwappingAgent: Agent {
        typealias T = LoopbackAgent.Settings
        let inner: LoopbackAgent
        func config() -> () -> LoopbackAgent.Settings { inner.config() }
        func endSession(oidcConfig: OidcConfig<T>, idToken: String) async throws -> Bool { false }
        func authorize(oidcConfig: OidcConfig<T>) async throws -> AuthCode {
            let code = try await inner.authorize(oidcConfig: oidcConfig)
            return AuthCode(code: code.code, codeVerifier: code.codeVerifier, redirectUri: code.redirectUri, nonce: "another-sign-in")
        }
    }

    /// A signed-in session of `clientId`.
    static func signedIn(_ clientId: String = "coffer-public") async throws -> (OidcClientConfig, Token) {
        let browser = Browser()
        defer { browser.remove() }
        let config = TestProvider.config(clientId: clientId, browser: browser)
        return (config, try await browser.signIn(OidcClient(config: config)))
    }

    static func refusal(_ work: () async throws -> Void) async -> IdTokenError? {
        do {
            try await work()
            return nil
        } catch OidcError.authorizeError(let cause as IdTokenError, let message) {
            #expect(message?.contains("nothing was stored") == true)
            return cause
        } catch {
            Issue.record("\(error)")
            return nil
        }
    }

    @Test("the provider's own RS256 tokens pass; another client's is refused for its audience")
    func audience() async throws {
        let (config, token) = try await Self.signedIn()
        try await config.acceptIdToken(of: token, nonce: nil)
        let (_, other) = try await Self.signedIn("coffer-other")
        #expect(await Self.refusal { try await config.acceptIdToken(of: other, nonce: nil) } == .audience)
    }

    @Test("a token signed by another key under the provider's key id, or with its claims changed, is refused for its signature")
    func forged() async throws {
        let (config, token) = try await Self.signedIn()
        let idToken = try #require(token.idToken)
        let parts = idToken.split(separator: ".").map(String.init)
        let header = try #require(IdTokenValidator.base64URLDecoded(Substring(parts[0])))
        let kid = try #require((try JSONSerialization.jsonObject(with: header) as? [String: Any])?["kid"] as? String)
        // Our own RSA key, the provider's kid, the provider's claims.
        let claims = try await JWTKeyCollection().add(jwks: JWKS(keys: [])).unverified(idToken, as: IdTokenValidator.Claims.self)
        let ours = try await JWTKeyCollection().add(rsa: Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048)),
                                                    digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        var forged = token
        forged.idToken = try await ours.sign(claims, kid: JWKIdentifier(string: kid))
        #expect(await Self.refusal { try await config.acceptIdToken(of: forged, nonce: nil) } == .signature)
        // The provider's signature over other claims.
        let payload = try #require(IdTokenValidator.base64URLDecoded(Substring(parts[1])))
        var object = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        object["sub"] = "mallory"
        forged.idToken = parts[0] + "." + Pkce.base64URL(try JSONSerialization.data(withJSONObject: object)) + "." + parts[2]
        #expect(await Self.refusal { try await config.acceptIdToken(of: forged, nonce: nil) } == .signature)
    }

    @Test("an expired token (the provider's, read two days on) is refused")
    func expired() async throws {
        let (config, token) = try await Self.signedIn()
        #expect(await Self.refusal { try await config.acceptIdToken(of: token, nonce: nil, now: Date().addingTimeInterval(2 * 86_400)) } == .expired)
    }

    @Test("a sign-in whose ID token carries another nonce is refused, and nothing is stored")
    func nonce() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        var settings = LoopbackAgent.Settings()
        settings.browser = browser.launcher
        settings.announce = { _, _ in }
        config.updateAgent(NonceSwappingAgent(inner: LoopbackAgent(settings: settings)))
        let result = await OidcClient(config: config).token()
        guard case .failure(.authorizeError(let cause as IdTokenError, _)) = result else { Issue.record("\(result)"); return }
        #expect(cause == .nonce)
        #expect(try await config.storage.get() == nil)
    }
}
