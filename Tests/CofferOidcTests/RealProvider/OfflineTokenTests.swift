@testable import CofferOidc
import CofferOrchestrate
import CofferStorage
import Foundation
import Synchronization
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A provider that cannot be reached: every request fails, and is counted.
final class Unreachable: URLProtocol, @unchecked Sendable {
    // @unchecked Sendable: the count is a Mutex; URLProtocol's own fields are used on one thread.
    static let requests = Mutex(0)
    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func startLoading() {
        Self.requests.withLock { $0 += 1 }
        client?.urlProtocol(self, didFailWithError: URLError(.cannotConnectToHost))
    }
    override func stopLoading() {}
}

@Suite("A named session's valid token needs no provider", .enabled(if: TestProvider.isRunning, TestProvider.skipReason), .timeLimit(.minutes(2)))
struct OfflineTokenTests {
    @Test("signed in at the real provider, then cut off from it: a valid token is still given, without a request; an expiring one is an error")
    func validTokenOffline() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        var settings = LoopbackAgent.Settings()
        settings.browser = browser.launcher
        settings.announce = { _, _ in }
        let signedIn = try await OidcSessions(directory: temporary.url).signIn("work", settings: OidcSessionSettings(
            issuer: try #require(TestProvider.issuer), clientId: "coffer-public", scopes: ["openid"]), agent: LoopbackAgent(settings: settings))

        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [Unreachable.self]
        let offline = try OidcSessions(directory: temporary.url, httpClient: HttpClient(session: URLSession(configuration: configuration)))
        Unreachable.requests.withLock { $0 = 0 }
        #expect(try await offline.token("work", minValid: 60).accessToken == signedIn.accessToken)
        #expect(Unreachable.requests.withLock { $0 } == 0, "no request for a valid token")

        // A sign-in replacing the session holds its section: a token read meanwhile waits for it
        // and is the new session's, never the replaced one (which that sign-in revokes).
        let storage = try offline.tokenStorage("work")
        let holding = Mutex(false)
        let reading = Task {
            while !holding.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            return try await offline.token("work").accessToken
        }
        try await storage.withExclusiveSection {
            holding.withLock { $0 = true }
            try await Task.sleep(for: .milliseconds(300))
            var replaced = signedIn
            replaced.accessToken = "the-new-session"
            try await storage.save(item: replaced)
        }
        #expect(try await reading.value == "the-new-session")

        // Valid for less than the caller needs: a refresh is due, and the provider is gone.
        await #expect(throws: (any Error).self) { try await offline.token("work", minValid: 3_600) }
        #expect(Unreachable.requests.withLock { $0 } > 0)
        #expect(try await OidcSessions(directory: temporary.url).settings("work") != nil, "the session is kept")
    }
}
