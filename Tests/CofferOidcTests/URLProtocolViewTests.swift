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
}
}
