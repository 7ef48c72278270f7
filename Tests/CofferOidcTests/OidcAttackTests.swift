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

extension StubProviderSuites {
/// Found by the attack review of the first OIDC slice (issue 32); each test failed before its fix.
@Suite("OidcClient, attacked")
struct OidcAttackTests {
    @Test("a redirect without state, or delivered twice, is never exchanged (twice)")
    func redirectReplays() async throws {
        StubProvider.reset()
        let config = stubConfig()
        try await config.oidcInitialize()
        let client = OidcClient(config: config)
        _ = try client.generateAuthorizeUrl()
        await #expect(throws: OidcError.self) { try await client.extractCodeAndGetToken(from: URL(string: "http://127.0.0.1:8765/callback?code=x")!) }
        #expect(StubProvider.calls("/token") == 0)

        let url = try client.generateAuthorizeUrl()
        let state = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value)
        let redirect = URL(string: "http://127.0.0.1:8765/callback?code=real&state=\(state)")!
        async let first = try? client.extractCodeAndGetToken(from: redirect)
        async let second = try? client.extractCodeAndGetToken(from: redirect)
        let results = await [first, second]
        #expect(results.compactMap { $0 }.count == 1 && StubProvider.calls("/token") == 1, "one exchange")
    }

    @Test("a redirect handed to extractCodeAndGetToken names the provider when it says it always does (RFC 9207)")
    func redirectIssuer() async throws {
        let base = StubProvider.base
        StubProvider.reset { $0.discovery = """
            {"issuer": "\(base)", "authorization_endpoint": "\(base)/authorize", "token_endpoint": "\(base)/token",
             "userinfo_endpoint": "\(base)/userinfo", "authorization_response_iss_parameter_supported": true}
            """ }
        let config = stubConfig()
        try await config.oidcInitialize()
        let client = OidcClient(config: config)
        func redirect(_ iss: String?) throws -> URL {
            let url = try client.generateAuthorizeUrl()
            let state = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value)
            let issuer = iss.map { "&iss=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") } ?? ""
            return URL(string: "http://127.0.0.1:8765/callback?code=c&state=\(state)\(issuer)")!
        }
        for bad in [nil, "https://evil.example"] {
            let error = await #expect(throws: OidcError.self) { try await client.extractCodeAndGetToken(from: try redirect(bad)) }
            #expect(error?.errorMessage.contains("RFC 9207") == true)
        }
        #expect(StubProvider.calls("/token") == 0, "nothing was exchanged")
        _ = try await client.extractCodeAndGetToken(from: try redirect(base))
        #expect(StubProvider.calls("/token") == 1)
    }

    @Test("a token with control characters (a terminal escape, a CR LF for a header) is refused, nothing stored")
    func controlCharactersInTokens() async throws {
        StubProvider.reset {
            $0.refreshStatus = 200
            $0.refreshBody = #"{"access_token": "ok\u001b]0;pwned\u0007", "token_type": "Bearer", "expires_in": 600, "refresh_token": "r"}"#
        }
        let config = stubConfig()
        try await config.storage.save(item: Token(accessToken: "old", expiresIn: -10, refreshToken: "refresh-0"))
        let result = await OidcClient(config: config).token()
        guard case .failure(let error) = result else { Issue.record("\(result)"); return }
        #expect(error.errorMessage.contains("control characters") && !error.errorMessage.contains("\u{1B}"))
        #expect(try await config.storage.get()?.accessToken == "old", "the session is kept")
    }

    @Test("a revoke made while a refresh is in flight is not undone by it")
    func revokeAfterRefresh() async throws {
        StubProvider.reset { $0.delay = .milliseconds(400) }
        let config = stubConfig()
        try await config.storage.save(item: Token(accessToken: "old", expiresIn: -10, refreshToken: "refresh-0"))
        let client = OidcClient(config: config)
        async let refreshing = client.token()
        try await Task.sleep(for: .milliseconds(100))
        await client.revoke()
        _ = await refreshing
        #expect(try await config.storage.get() == nil, "revoked means gone")
    }

    @Test("two users of one configuration and a clone share one refresh; refresh() makes one call")
    func oneFlightPerSession() async throws {
        StubProvider.reset { $0.delay = .milliseconds(200) }
        let config = stubConfig()
        try await config.storage.save(item: Token(accessToken: "old", expiresIn: -10, refreshToken: "refresh-0"))
        let users = [OidcUser(config: config), OidcUser(config: config), OidcUser(config: config.clone())]
        let tokens = await withTaskGroup(of: String?.self) { group in
            for user in users { for _ in 0..<4 { group.addTask { try? await user.token().get().accessToken } } }
            return await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(tokens == ["access-1"] && StubProvider.calls("/token") == 1)
        #expect(config.clone().storage === config.storage)

        StubProvider.reset()
        try await config.storage.save(item: Token(accessToken: "old", expiresIn: -10, refreshToken: "refresh-0"))
        _ = await users[0].refresh()
        #expect(StubProvider.calls("/token") == 1, "refresh() refreshes once")
    }

    @Test("a refresh failing for a reason other than a refusal keeps the session and signs no one in again")
    func refreshOutage() async throws {
        StubProvider.reset { $0.refreshStatus = 503 }
        let config = stubConfig()
        let stored = Token(accessToken: "old", expiresIn: -10, refreshToken: "refresh-0")
        try await config.storage.save(item: stored)
        guard case .failure(.apiError(503, _)) = await OidcClient(config: config).token() else {
            Issue.record("an outage was not reported as such")
            return
        }
        #expect(try await config.storage.get() == stored && StubProvider.calls("/revoke") == 0 && StubProvider.calls("/token") == 1)
    }

    @Test("an error answer that echoes tokens reaches no message, log line or dump")
    func echoingProvider() async throws {
        StubProvider.reset { $0.refreshStatus = 201; $0.refreshBody = #"{"access_token": "echoed-secret", "refresh_token": "echoed-refresh"}"# }
        let logger = CollectingLogger()
        let config = stubConfig()
        config.logger = logger
        try await config.storage.save(item: Token(accessToken: "old", expiresIn: -10, refreshToken: "refresh-0"))
        let result = await OidcClient(config: config).token()
        guard case .failure(let error) = result else { Issue.record("a 201 was taken for a token"); return }
        var dumped = ""
        dump(error, to: &dumped)
        let everything = [error.errorMessage, "\(error)", dumped, logger.lines.withLock { $0.joined() }].joined()
        #expect(!everything.contains("echoed-secret") && !everything.contains("echoed-refresh"))
        #expect(error.errorMessage.contains("201"))
    }

    @Test("no expires_in: the expiry is unknown, not past (one call, not one per token()); a huge one does not crash")
    func unknownExpiry() async throws {
        StubProvider.reset()
        let decoded = try JSONDecoder().decode(Token.self, from: Data(#"{"access_token": "a", "token_type": "bearer"}"#.utf8))
        #expect(!decoded.hasKnownExpiry && !decoded.isExpired && !decoded.isExpired(threshold: 3600))
        let again = try JSONDecoder().decode(Token.self, from: JSONEncoder().encode(decoded))
        #expect(again == decoded, "reads back the same")
        let huge = try JSONDecoder().decode(Token.self, from: Data(#"{"access_token": "a", "expires_in": 9223372036854775807}"#.utf8))
        #expect(!huge.isExpired)
        #expect(Token(accessToken: "b", expiresIn: -1).isExpired && Token(accessToken: "b", expiresIn: 60).hasKnownExpiry)
    }

    @Test("a discovery document without a token endpoint, or with plain http, says so; userinfo that is not JSON fails")
    func hostileDiscovery() async throws {
        StubProvider.reset { $0.discovery = #"{"authorization_endpoint": "http://evil.example/authorize", "token_endpoint": "http://evil.example/token"}"# }
        let config = stubConfig()
        try await config.storage.save(item: Token(accessToken: "old", expiresIn: -10, refreshToken: "refresh-0"))
        guard case .failure(let error) = await OidcClient(config: config).token() else { Issue.record("plain http was used"); return }
        #expect(error.errorMessage.contains("not https"))

        StubProvider.reset { $0.userinfoBody = "<html>not json</html>" }
        let other = stubConfig()
        try await other.storage.save(item: Token(accessToken: "live", expiresIn: 3600))
        guard case .failure = await OidcUser(config: other).userinfo(cache: true) else { Issue.record("HTML taken for claims"); return }
    }

    @Test("ending a session with the provider unreachable still forgets the tokens, and says it failed")
    func logoutOffline() async throws {
        StubProvider.reset { $0.discoveryStatus = 500 }
        let config = stubConfig()
        try await config.storage.save(item: Token(accessToken: "live", expiresIn: 3600, idToken: "id"))
        let ended = await OidcClient(config: config).endSession()
        #expect(try await config.storage.get() == nil)
        #expect(!ended, "the provider was not told")
    }
}
}
