import CofferOidc
import CofferOrchestrate
import CofferStorage
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension StubProviderSuites {
/// Ping's own Oidc tests read a form's length from the `Content-Length` header their
/// `URLProtocol` sees; FoundationNetworking hands a protocol the request without one unless the
/// request states it.
@Suite("HttpClient: what a URLProtocol sees")
struct URLProtocolViewTests {
    @Test("a form request states its Content-Length (the length of Ping's unencoded refresh form)")
    func contentLength() async throws {
        StubProvider.reset()
        let config = stubConfig()
        config.clientId = "test-client-id"
        try await config.storage.save(item: Token(accessToken: "old", expiresIn: -10, refreshToken: "Dummy RefreshToken"))
        _ = try await OidcClient(config: config).token().get()
        let length = StubProvider.state.withLock { $0.lengths.last ?? nil }
        #expect(length == "grant_type=refresh_token&refresh_token=Dummy RefreshToken&client_id=test-client-id".count)
    }

    /// Ping's tests build `HttpClient(session: .shared)` and register their `URLProtocol` after
    /// it; FoundationNetworking fixes the shared session's protocols when the session is first
    /// made. Nothing else in this process makes it, so this fails if the client makes it early.
    @Test("HttpClient(session: .shared) sees a URLProtocol registered after the client was built")
    func sharedSessionSeesLaterProtocol() async throws {
        StubProvider.reset()
        let client = HttpClient(session: .shared)
        _ = URLProtocol.registerClass(StubProvider.self)
        defer { URLProtocol.unregisterClass(StubProvider.self) }
        let request = Request()
        request.url(StubProvider.base + "/.well-known/openid-configuration")
        let (_, response) = try await client.sendRequest(request: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(StubProvider.calls("/.well-known/openid-configuration") == 1)
    }
}
}
