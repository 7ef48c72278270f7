import CofferOidc
import CofferOrchestrate
import CofferStorage
import Foundation
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The examples of CofferOidc's and CofferOrchestrate's articles, verbatim, on the stub provider.
extension StubProviderSuites {
@Suite("DocC: signing in with OpenID Connect")
struct DocOidcExamplesTests {
    @Test("configure, store in an encrypted file, get a token (refreshed when expired)")
    func signingIn() async throws {
        StubProvider.reset()
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url
        let stub = stubConfig()

        let config = OidcClientConfig()
        config.discoveryEndpoint = "https://op.example.com/.well-known/openid-configuration"
        config.clientId = "cli"
        config.redirectUri = "http://127.0.0.1:8765/callback"
        config.scope("openid")
        config.storage = EncryptedFileStorage<Token>(fileName: "myOidcTokens", directory: folder, cacheStrategy: .cacheOnFailure)

        config.discoveryEndpoint = stub.discoveryEndpoint
        config.httpClient = stub.httpClient
        try await config.storage.save(item: Token(accessToken: "expired", expiresIn: -1, refreshToken: "refresh-0"))

        let client = OidcClient(config: config)
        let token = try await client.token().get()      // the stored token, refreshed when it expires

        #expect(token.accessToken == "access-1")
        #expect(try Data(contentsOf: folder.appendingPathComponent("myOidcTokens")).range(of: Data("access-1".utf8)) == nil, "sealed")
    }

    @Test("a form request as the Orchestrate article sends it")
    func sendingRequests() async throws {
        StubProvider.reset()
        let refreshToken = "refresh+with&odd=characters"
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubProvider.self]
        let session = URLSession(configuration: configuration)

        let request = Request()
        request.url("https://op.example.com/token")
        request.form(formData: ["grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": "cli"])

        request.url(StubProvider.base + "/token")
        let (data, response) = try await HttpClient(session: session).sendRequest(request: request)

        #expect((response as? HTTPURLResponse)?.statusCode == 200 && !data.isEmpty)
        #expect(StubProvider.state.withLock { $0.forms.last?["refresh_token"] } == refreshToken)
    }
}
}
