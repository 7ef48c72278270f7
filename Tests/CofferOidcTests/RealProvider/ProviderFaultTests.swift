@testable import CofferOidc
import CofferOrchestrate
import CofferStorage
import Foundation
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The provider as a broken or hostile one: a token endpoint that answers slowly, or with more
/// bytes than any token. The refresh fails within its deadline and its size, and the stored
/// session is left as it was.
@Suite("A slow or flooding provider", .enabled(if: TestProvider.isRunning, TestProvider.skipReason), .serialized, .timeLimit(.minutes(3)))
struct ProviderFaultTests {
    static func fault(_ kind: String, _ value: String) throws -> URL {
        let file = URL(fileURLWithPath: TestProvider.environment["COFFER_TEST_OIDC_STATE"] ?? "/nonexistent").appendingPathComponent("\(kind)-coffer-faulty")
        try value.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// A session of coffer-faulty signed in with `httpClient`, about to be refreshed.
    static func signedIn(_ httpClient: HttpClient) async throws -> (OidcClientConfig, Token, Browser) {
        let browser = Browser()
        let config = TestProvider.config(clientId: "coffer-faulty", browser: browser)
        config.httpClient = httpClient
        let token = try await browser.signIn(OidcClient(config: config))
        config.refreshThreshold = 7200
        return (config, token, browser)
    }

    static func cause(_ result: Result<Token, OidcError>) -> (any Error)? {
        guard case .failure(let error) = result else { return nil }
        switch error {
        case .authorizeError(let cause, _), .networkError(let cause, _), .unknown(let cause, _): return cause
        case .apiError: return error
        }
    }

    @Test("Coffer's own session: a refresh answered in 20 s fails at the 1 s deadline; 50 MB are cut off at 4 MiB; the session stays")
    func ownSession() async throws {
        let client = HttpClient()
        let (config, token, browser) = try await Self.signedIn(client)
        defer { browser.remove() }
        // The provider answers after 20 s; the deadline is 1 s. The error says which ended it
        // (timing the call would measure the machine, busy with the whole suite).
        client.timeoutIntervalForRequest = 1
        let slow = try Self.fault("delay", "20")
        let late = await OidcClient(config: config).token()
        try FileManager.default.removeItem(at: slow)
        #expect(Self.cause(late) as? HttpClientError == .deadlineExceeded(seconds: 1), "\(late)")
        #expect(try await config.storage.get()?.refreshToken == token.refreshToken)

        client.timeoutIntervalForRequest = 30
        let huge = try Self.fault("huge", "50000000")
        let flooded = await OidcClient(config: config).token()
        try FileManager.default.removeItem(at: huge)
        #expect(Self.cause(flooded) as? HttpClientError == .responseTooLarge(limit: 4 << 20), "\(flooded)")
        #expect(try await config.storage.get()?.refreshToken == token.refreshToken)
    }

    @Test("a session of your own: the size is checked once the answer is in; the deadline holds")
    func givenSession() async throws {
        let client = HttpClient(session: URLSession(configuration: .ephemeral))
        let (config, token, browser) = try await Self.signedIn(client)
        defer { browser.remove() }
        client.responseSizeLimit = 1 << 20
        let huge = try Self.fault("huge", "3000000")
        let flooded = await OidcClient(config: config).token()
        try FileManager.default.removeItem(at: huge)
        #expect(Self.cause(flooded) as? HttpClientError == .responseTooLarge(limit: 1 << 20), "\(flooded)")
        client.timeoutIntervalForRequest = 1
        let slow = try Self.fault("delay", "20")
        let late = await OidcClient(config: config).token()
        try FileManager.default.removeItem(at: slow)
        #expect(Self.cause(late) as? HttpClientError == .deadlineExceeded(seconds: 1), "\(late)")
        #expect(try await config.storage.get()?.refreshToken == token.refreshToken)
    }
}
