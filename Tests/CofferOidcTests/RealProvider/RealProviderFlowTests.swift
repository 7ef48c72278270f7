@testable import CofferOidc
import CofferOrchestrate
import CofferStorage
import Foundation
import Synchronization
import TestSupport
import Testing

/// Every flow against a real OpenID Provider (django-oauth-toolkit, rotating refresh tokens and
/// revoking a chain when a spent one comes back), signed in through the loopback agent with a
/// browser stand-in that fills in the provider's login form.
@Suite("A real OpenID Provider", .enabled(if: TestProvider.isRunning, TestProvider.skipReason), .timeLimit(.minutes(3)))
struct RealProviderFlowTests {
    @Test("discovery reads the provider's endpoints, issuer and keys")
    func discovery() async throws {
        let config = TestProvider.config()
        try await config.oidcInitialize()
        let openId = try #require(config.openId)
        let issuer = try #require(TestProvider.issuer)
        #expect(openId.issuer == issuer && openId.tokenEndpoint == issuer + "/token/" && openId.authorizationEndpoint == issuer + "/authorize/")
        #expect(openId.revocationEndpoint == issuer + "/revoke_token/" && openId.endSessionEndpoint == issuer + "/logout/")
        #expect(openId.jwksUri == issuer + "/.well-known/jwks.json" && openId.deviceAuthorizationEndpoint == issuer + "/device-authorization/")
    }

    @Test("code + PKCE through the loopback agent: the browser signs in, the tokens are stored, userinfo names the user")
    func signIn() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let client = OidcClient(config: config)
        let token = try await browser.signIn(client)
        #expect(token.refreshToken != nil && token.idToken != nil && token.scope?.split(separator: " ").contains("email") == true)
        #expect(try await config.storage.get()?.accessToken == token.accessToken)
        #expect(browser.log.first == "login" && browser.log.last == "answer 200", "\(browser.log)")
        // The request the browser opened: S256, a state, a nonce, a loopback redirect on the listener's port.
        let opened = try #require(browser.opened.withLock { $0.first })
        let query = try #require(URLComponents(url: opened, resolvingAgainstBaseURL: false)?.queryItems)
        func value(_ name: String) -> String? { query.first { $0.name == name }?.value }
        #expect(value("code_challenge_method") == "S256" && value("state")?.count == 43 && value("nonce")?.count == 43)
        #expect(value("redirect_uri")?.hasPrefix("http://127.0.0.1:") == true && value("redirect_uri")?.hasSuffix("/callback") == true)
        let claims = try await client.userinfo().get()
        #expect(claims["email"] as? String == "alice@example.test" && claims["name"] as? String == "Alice Liddell")
        // Signed in once: the next token() is the stored one, and the browser is not asked again.
        #expect(try await client.token().get().accessToken == token.accessToken)
        #expect(browser.opened.withLock { $0.count } == 1)
    }

    @Test("refresh with rotation: the new refresh token replaces the old, which the provider no longer takes")
    func refreshRotates() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let client = OidcClient(config: config)
        let first = try await client.token().get()
        // Every token is now "about to expire": token() refreshes.
        config.refreshThreshold = 7200
        let second = try await client.token().get()
        #expect(second.accessToken != first.accessToken && second.refreshToken != first.refreshToken)
        #expect(try await config.storage.get()?.refreshToken == second.refreshToken)
        #expect(second.idToken != nil, "the ID token is kept or renewed")
        #expect(browser.opened.withLock { $0.count } == 1, "a refresh, not a new sign-in")
        // The spent token is refused; presenting it revoked the whole chain (the reason a
        // refresh must never run twice), so the session's current token dies with it.
        #expect(try await TestProvider.refreshes(try #require(first.refreshToken)) == false)
        #expect(try await TestProvider.refreshes(try #require(second.refreshToken)) == false)
    }

    @Test("16 tasks at expiry share one refresh: the provider, which revokes a chain on reuse, still honours the session")
    func singleFlight() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        _ = try await OidcClient(config: config).token().get()
        config.refreshThreshold = 7200
        let tokens = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<16 { group.addTask { try? await OidcClient(config: config).token().get().accessToken } }
            return await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1 && tokens.first! != nil, "one refresh, one new token for all 16")
        // Had two refreshes raced, the second would have presented a spent token and the
        // provider would have revoked the chain: this refresh would fail.
        config.refreshThreshold = 0
        let current = try #require(try await config.storage.get())
        #expect(try await TestProvider.userinfoStatus(current.accessToken) == 200)
        #expect(try await TestProvider.refreshes(try #require(current.refreshToken)))
    }

    @Test("revoke deletes the session and the provider no longer takes either token")
    func revoke() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let client = OidcClient(config: config)
        let token = try await client.token().get()
        #expect(try await TestProvider.userinfoStatus(token.accessToken) == 200)
        await client.revoke()
        #expect(try await config.storage.get() == nil)
        #expect(try await TestProvider.userinfoStatus(token.accessToken) == 401)
        #expect(try await TestProvider.refreshes(try #require(token.refreshToken)) == false)
    }

    @Test("RP-initiated logout through the browser: the provider's session ends (the next sign-in asks for the password again)")
    func endSession() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let client = OidcClient(config: config)
        let token = try await client.token().get()
        #expect(await client.endSession())
        #expect(try await config.storage.get() == nil)
        #expect(try await TestProvider.refreshes(try #require(token.refreshToken)) == false)
        // The end-session address the browser was given is on the loopback: no ID token on
        // its command line.
        let logout = try #require(browser.opened.withLock { $0.last })
        let idToken = try #require(token.idToken)
        #expect(logout.host == "127.0.0.1" && !logout.absoluteString.contains(idToken))
        let logins = browser.log.filter { $0 == "login" }.count
        _ = try await client.token().get()
        #expect(browser.log.filter { $0 == "login" }.count == logins + 1, "\(browser.log)")
    }

    @Test("a signed-in browser is not asked for the password again (its session cookie), until logout")
    func browserSessionKept() async throws {
        let browser = Browser()
        defer { browser.remove() }
        _ = try await OidcClient(config: TestProvider.config(browser: browser)).token().get()
        _ = try await OidcClient(config: TestProvider.config(browser: browser)).token().get()
        #expect(browser.log.filter { $0 == "login" }.count == 1, "\(browser.log)")
    }

    @Test("the device grant: codes shown, the user approves elsewhere, the tokens are stored")
    func deviceGrant() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let config = TestProvider.config(clientId: "coffer-device")
        var statuses: [String] = []
        var signedIn: (any User)?
        for try await status in try await OidcDeviceClient(config: config).deviceAuthorization() {
            switch status {
            case .started(let codes):
                statuses.append("started")
                #expect(!"\(codes)".contains(codes.deviceCode) && codes.interval == 1)
                #expect(browser.start(["--device", codes.verificationUri, codes.userCode]))
            case .polling: if statuses.last != "polling" { statuses.append("polling") }
            case .success(let user): statuses.append("success"); signedIn = user
            case .accessDenied: statuses.append("denied")
            case .expired: statuses.append("expired")
            }
        }
        #expect(statuses.first == "started" && statuses.last == "success", "\(statuses)")
        let token = try #require(try await config.storage.get())
        #expect(try await TestProvider.userinfoStatus(token.accessToken) == 200)
        #expect(try await signedIn?.token().get().accessToken == token.accessToken)
        #expect(browser.log.contains("device accept 200"))
    }

    @Test("the device grant refused by the user ends as accessDenied, nothing stored")
    func deviceGrantDenied() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let config = TestProvider.config(clientId: "coffer-device")
        var last: String?
        for try await status in try await OidcDeviceClient(config: config).deviceAuthorization() {
            switch status {
            case .started(let codes): _ = browser.start(["--device", codes.verificationUri, codes.userCode, "deny"])
            case .accessDenied: last = "denied"
            case .success: last = "success"
            default: break
            }
        }
        #expect(last == "denied")
        #expect(try await config.storage.get() == nil)
    }

    @Test("a confidential client signs in and refreshes with client_secret_basic and client_secret_post; a wrong secret is refused")
    func confidentialClient() async throws {
        let browser = Browser()
        defer { browser.remove() }
        for method in [ClientAuthentication.clientSecretBasic(secret: TestProvider.clientSecret), .clientSecretPost(secret: TestProvider.clientSecret)] {
            let config = TestProvider.config(clientId: "coffer-confidential", browser: browser)
            config.clientAuthentication = method
            let client = OidcClient(config: config)
            let first = try await client.token().get()
            config.refreshThreshold = 7200
            let second = try await client.token().get()
            #expect(second.refreshToken != first.refreshToken, "\(method)")
            #expect(!"\(method)".contains(TestProvider.clientSecret))
        }
        let config = TestProvider.config(clientId: "coffer-confidential", browser: browser)
        config.clientAuthentication = .clientSecretBasic(secret: "not-the-secret")
        let result = await OidcClient(config: config).token()
        guard case .failure(.apiError(let code, let message)) = result else { Issue.record("\(result)"); return }
        #expect(code == 401 && message.contains("invalid_client"))
    }
}
