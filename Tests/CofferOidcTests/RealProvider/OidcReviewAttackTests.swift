@testable import CofferOidc
import CofferOrchestrate
import CofferStorage
import Foundation
import Synchronization
import TestSupport
import Testing

/// The findings of the attack review of the sign-in (issue 32), each as the attack that found it.
@Suite("OIDC attack review", .enabled(if: TestProvider.isRunning, TestProvider.skipReason), .timeLimit(.minutes(3)))
struct OidcReviewAttackTests {
    @Test("a discovery document naming another issuer than the one configured is refused")
    func issuerMismatch() async throws {
        let config = TestProvider.config()
        config.issuer = try #require(TestProvider.issuer) + "-elsewhere"
        await #expect(throws: OidcError.self) { try await config.oidcInitialize() }
        let same = TestProvider.config()
        same.issuer = try #require(TestProvider.issuer) + "/"
        try await same.oidcInitialize()
    }

    @Test("issuers and discovery endpoints: https, or http on the loopback only; no user name, password, query or fragment")
    func unsafeIssuers() async throws {
        for bad in ["http://192.0.2.2/o", "http://localhost:8080/o", "file:///etc/passwd", "https://alice:hunter2@id.example/o",
                    "https://id.example/o?x=1", "https://id.example/o#f", "ftp://id.example"] {
            #expect(OidcSessionSettings.issuerProblem(bad) != nil, "\(bad)")
        }
        for good in ["https://id.example.com", "https://id.example.com/realms/work", "http://127.0.0.1:8080/o", "http://[::1]:80/o"] {
            #expect(OidcSessionSettings.issuerProblem(good) == nil, "\(good)")
        }
        let config = OidcClientConfig()
        config.discoveryEndpoint = "http://192.0.2.2/.well-known/openid-configuration"
        await #expect(throws: OidcError.self) { try await config.oidcInitialize() }
    }

    @Test("a provider with no jwks_uri: an ID token it cannot check is refused where checks are required")
    func noKeys() async throws {
        let (config, token) = try await IdTokenAttackTests.signedIn()
        let unchecked = try #require(config.openId)
        let stripped = try JSONDecoder().decode(OpenIdConfiguration.self, from: JSONSerialization.data(withJSONObject: [
            "issuer": unchecked.issuer ?? "", "authorization_endpoint": unchecked.authorizationEndpoint, "token_endpoint": unchecked.tokenEndpoint,
        ]))
        config.openId = stripped
        try await config.acceptIdToken(of: token, nonce: nil)        // Ping's mock provider's way: no keys, no check
        config.requiresIdTokenValidation = true
        await #expect(throws: OidcError.self) { try await config.acceptIdToken(of: token, nonce: nil) }
    }

    @Test("a JWKS with keys Coffer cannot use (oct, an encryption key, an unknown curve) keeps the ones it can")
    func tolerantKeySet() throws {
        let set = """
            {"keys": [
              {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac", "alg": "HS256"},
              {"kty": "EC", "crv": "secp256k1", "kid": "k1", "x": "AA", "y": "AA"},
              {"kty": "RSA", "use": "enc", "kid": "enc", "n": "AQAB", "e": "AQAB"},
              {"kty": "RSA", "kid": "sig", "alg": "RS256", "n": "sXch", "e": "AQAB"}
            ]}
            """
        let keys = try ProviderKeys.keySet(from: Data(set.utf8)).keys.compactMap { $0.keyIdentifier?.string }
        #expect(!keys.contains("enc") && keys.contains("sig"))
        #expect(throws: IdTokenError.self) { try ProviderKeys.keySet(from: Data("[]".utf8)) }
    }

    @Test("$BROWSER with %s, quoted or not: the URL is one argument, never split or globbed")
    func browserQuoting() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let out = directory.appending("args").path
        let browser = directory.appending("browser")
        try writeExecutable("#!/bin/sh\nfor argument; do printf '[%s]\\n' \"$argument\"; done > \(out)\n", at: browser)
        let url = "http://x/a b?c=*&d='e'"
        for command in ["\(browser.path) %s", "\(browser.path) '%s'", "\(browser.path) \"%s\"", browser.path] {
            let script = BrowserLauncher.shellScript(for: command)
            let result = try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", script, "sh", url])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            let printed = try String(contentsOfFile: out, encoding: .utf8)
            #expect(printed == "[\(url)]\n", "\(command) printed \(printed)")
        }
    }

    @Test("a same-user connection sending a byte a second for two minutes holds the listener 5 s at most; the real redirect still signs in")
    func slowSender() async throws {
        let browser = Browser(holding: true)
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let signIn = Task { try await OidcClient(config: config).token().get() }
        let (port, _) = try await LoopbackAttackTests.opened(browser)
        let slow = Task {
            try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/bash"),
                ["-c", "exec 3<>/dev/tcp/127.0.0.1/\(port) || exit 1; for i in $(seq 120); do printf G >&3 || exit 0; sleep 1; done"], deadline: .seconds(130))
        }
        try await Task.sleep(for: .milliseconds(300))
        browser.release()
        // The sender would hold an unbounded read for its two minutes, past the sign-in's 60 s:
        // the sign-in succeeding is the proof that its request was cut at 5 s.
        let token = try await signIn.value
        #expect(try await TestProvider.userinfoStatus(token.accessToken) == 200)
        slow.cancel()
    }
}
