@testable import CofferOidc
import CofferMFACommons
import CofferOrchestrate
import CofferStorage
import Foundation
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An agent that hands out a code, or fails as a user who closed the browser would.
struct CodeAgent: Agent {
    typealias T = Void
    let fails: Bool
    func config() -> () -> Void { {} }
    func endSession(oidcConfig: OidcConfig<Void>, idToken: String) async throws -> Bool { true }
    func authorize(oidcConfig: OidcConfig<Void>) async throws -> AuthCode {
        if fails { throw OidcError.authorizeError(message: "the user closed the browser") }
        return AuthCode(code: "code-1", codeVerifier: "verifier-1")
    }
}

/// A storage that keeps one value in memory (the configuration's own storage is the keyring).
func memoryStorage() -> StorageDelegate<Token> {
    StorageDelegate(delegate: MemoryStorage<Token>())
}

/// A configuration on the stub provider, in a session of its own.
func stubConfig(agentFails: Bool = false) -> OidcClientConfig {
    let session = URLSessionConfiguration.ephemeral
    session.protocolClasses = [StubProvider.self]
    let config = OidcClientConfig()
    config.discoveryEndpoint = StubProvider.base + "/.well-known/openid-configuration"
    config.clientId = "coffer-test"
    config.redirectUri = "http://127.0.0.1:8765/callback"
    config.scope("openid")
    config.storage = memoryStorage()
    config.httpClient = HttpClient(session: URLSession(configuration: session))
    config.updateAgent(CodeAgent(fails: agentFails))
    return config
}

/// The suites that share the stub provider's state, one test at a time.
@Suite(.serialized) struct StubProviderSuites {}

extension StubProviderSuites {
@Suite("OidcClient")
struct OidcClientTests {
    @Test("PKCE: RFC 7636 appendix B's challenge; 86-character verifiers from the secure source, never twice")
    func pkce() {
        #expect(Pkce.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let one = Pkce.generate(), two = Pkce.generate()
        #expect(one.codeVerifier.count == 86 && one.codeChallengeMethod == "S256" && one.codeVerifier != two.codeVerifier)
        #expect(one.codeVerifier.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(!"\(one)".contains(one.codeVerifier) && !"\(AuthCode(code: "c0de", codeVerifier: "v"))".contains("c0de"))
    }

    @Test("the authorization URL carries S256 and state; a redirect with another state is refused and nothing is exchanged")
    func stateChecked() async throws {
        StubProvider.reset()
        let config = stubConfig()
        try await config.oidcInitialize()
        let client = OidcClient(config: config)
        let url = try client.generateAuthorizeUrl()
        let items = Dictionary(uniqueKeysWithValues: (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        let state = try #require(items["state"])
        #expect(items["code_challenge_method"] == "S256" && items["client_id"] == "coffer-test" && items["response_type"] == "code")
        #expect(items["code_challenge"] == Pkce.challenge(for: try #require(client.pkce).codeVerifier))

        await #expect(throws: OidcError.self) {
            try await client.extractCodeAndGetToken(from: URL(string: "http://127.0.0.1:8765/callback?code=stolen&state=forged")!)
        }
        #expect(StubProvider.calls("/token") == 0, "a forged redirect is never exchanged")
        let token = try await client.extractCodeAndGetToken(from: URL(string: "http://127.0.0.1:8765/callback?code=real&state=\(state)")!)
        #expect(token.accessToken == "access-1" && StubProvider.calls("/token") == 1)
        #expect(try await config.storage.get()?.accessToken == "access-1", "stored")
        let form = StubProvider.state.withLock { $0.forms.last ?? [:] }
        #expect(form["code_verifier"] != nil && form["code"] == "real")
    }

    @Test("64 tasks asking at expiry make one refresh and all get its token")
    func singleFlight() async throws {
        StubProvider.reset { $0.delay = .milliseconds(200) }
        let config = stubConfig()
        try await config.storage.save(item: Token(accessToken: "old", expiresIn: -10, refreshToken: "refresh-0"))
        let client = OidcClient(config: config)
        let tokens = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<64 { group.addTask { try? await client.token().get().accessToken } }
            return await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(StubProvider.calls("/token") == 1)
        #expect(Set(tokens) == ["access-1"])
        #expect(try await config.storage.get()?.refreshToken == "refresh-1", "the rotated refresh token is stored")
    }

    @Test("one flight per storage object: the same for the same storage, dropped once its storage is gone")
    func flightsFollowStorages() {
        let kept = memoryStorage()
        #expect(SessionFlight.of(kept) === SessionFlight.of(kept))
        for _ in 0..<100 { _ = SessionFlight.of(memoryStorage()) }
        #expect(SessionFlight.kept < 50, "flights of storages that are gone are not kept")
        withExtendedLifetime(kept) {}
    }

    @Test("a provider that does not rotate: the refresh token kept; a refresh token with & = + and spaces arrives whole")
    func refreshKeepsToken() async throws {
        StubProvider.reset { $0.rotates = false }
        let config = stubConfig()
        let odd = "a&b=c+d e%"
        try await config.storage.save(item: Token(accessToken: "old", expiresIn: -10, refreshToken: odd, idToken: "id-0"))
        let token = try await OidcClient(config: config).token().get()
        #expect(token.accessToken == "access-1" && token.refreshToken == odd && token.idToken == "id-0")
        #expect(StubProvider.state.withLock { $0.forms.last?["refresh_token"] } == odd)
    }

    @Test("a refused refresh keeps the session when signing in again fails, and says so")
    func refusedRefreshKeepsSession() async throws {
        StubProvider.reset { $0.refusesRefresh = true }
        let config = stubConfig(agentFails: true)
        let stored = Token(accessToken: "old", expiresIn: -10, refreshToken: "refresh-0")
        try await config.storage.save(item: stored)
        let result = await OidcClient(config: config).token()
        guard case .failure(let error) = result else { Issue.record("a refused refresh succeeded"); return }
        #expect(error.errorMessage.contains("closed the browser"))
        #expect(try await config.storage.get() == stored, "nothing deleted")
        #expect(StubProvider.calls("/revoke") == 0)
    }

    @Test("a refused refresh with an agent that signs in: the new session stored first, then the old one revoked")
    func refusedRefreshSignsInAgain() async throws {
        StubProvider.reset { $0.refusesRefresh = true }
        let config = stubConfig()
        try await config.storage.save(item: Token(accessToken: "old", expiresIn: -10, refreshToken: "refresh-0"))
        let token = try await OidcClient(config: config).token().get()
        let stored = try await config.storage.get()
        #expect(token.accessToken == "access-1" && stored?.accessToken == "access-1")
        let revoked = StubProvider.state.withLock { $0.forms.filter { $0["token_type_hint"] != nil }.compactMap { $0["token"] } }
        #expect(revoked == ["refresh-0", "old"])
    }

    @Test("userinfo with the bearer token; revoke forgets the session and revokes both tokens")
    func userinfoAndRevoke() async throws {
        StubProvider.reset()
        let config = stubConfig()
        try await config.storage.save(item: Token(accessToken: "live", expiresIn: 3600, refreshToken: "refresh-0"))
        let user = OidcUser(config: config)
        let claims = try await user.userinfo(cache: false).get()
        #expect(claims["sub"] as? String == "alice" && claims["email_verified"] as? Bool == true && claims["age"] as? Int == 42)
        await user.revoke()
        #expect(try await config.storage.get() == nil)
        #expect(StubProvider.calls("/revoke") == 2)
    }

    @Test("log lines name requests, never a token, a code or a verifier")
    func logsCarryNoSecrets() async throws {
        StubProvider.reset()
        let logger = CollectingLogger()
        let before = LogManager.logger
        LogManager.logger = logger
        defer { LogManager.logger = before }
        let config = stubConfig()
        config.logger = logger
        try await config.storage.save(item: Token(accessToken: "secret-access", expiresIn: -10, refreshToken: "secret-refresh"))
        _ = await OidcClient(config: config).token()
        let logged = logger.lines.withLock { $0 }.joined(separator: "\n")
        #expect(logged.contains("/token"))
        for secret in ["secret-access", "secret-refresh", "access-1", "refresh-1"] { #expect(!logged.contains(secret), "\(secret) logged") }
    }
}

}

/// A Ping logger that keeps its lines (and its errors' descriptions).
final class CollectingLogger: CofferMFACommons.Logger {
    let lines = Mutex<[String]>([])
    func d(_ message: String) { lines.withLock { $0.append(message) } }
    func i(_ message: String) { lines.withLock { $0.append(message) } }
    func w(_ message: String, error: Error?) { lines.withLock { $0.append("\(message) \(error.map { "\($0)" } ?? "")") } }
    func e(_ message: String, error: Error?) { lines.withLock { $0.append("\(message) \(error.map { "\($0)" } ?? "")") } }
}
