@testable import CofferOidc
import CofferStorage
import Foundation
import TestSupport
import Testing

/// The examples of "Signing in with OpenID Connect" that need a real provider, verbatim.
@Suite("DocC: signing in on Linux", .enabled(if: TestProvider.isRunning, TestProvider.skipReason), .timeLimit(.minutes(3)))
struct DocRealProviderExamplesTests {
    @Test("the loopback agent, a confidential client's secret, a shared session file")
    func loopback() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url
        let config = TestProvider.config(clientId: "coffer-confidential")
        let clientSecret = TestProvider.clientSecret

        config.clientAuthentication = .clientSecretBasic(secret: clientSecret)

        config.storage = EncryptedFileStorage<Token>(fileName: "work-session", directory: folder)

        var settings = LoopbackAgent.Settings()
        settings.browser = browser.launcher
        settings.announce = { _, _ in }
        config.updateAgent(LoopbackAgent(settings: settings))   // LoopbackAgent() for the defaults
        let signedIn = try await OidcClient(config: config).token().get()

        #expect(try await config.storage.get()?.accessToken == signedIn.accessToken)
        #expect(LoopbackAgent().config()().path == "/callback" && LoopbackAgent().config()().port == 0)
    }

    @Test("the device grant as the article prints it")
    func device() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let config = TestProvider.config(clientId: "coffer-device")
        var printed: [String] = []
        func print(_ line: String) {
            printed.append(line)
            let words = line.split(separator: " ").map(String.init)
            _ = browser.start(["--device", words[1], words[4]])
        }

        for try await status in try await OidcDeviceClient(config: config).deviceAuthorization() {
            if case .started(let codes) = status { print("Visit \(codes.verificationUri) and enter \(codes.userCode)") }
        }

        #expect(printed.count == 1 && printed[0].hasPrefix("Visit http://127.0.0.1:"))
        #expect(try await config.storage.get() != nil)
    }

    @Test("named sessions: a token of a session signed in with OidcSessions")
    func namedSessions() async throws {
        let browser = Browser()
        defer { browser.remove() }
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url
        var settings = LoopbackAgent.Settings()
        settings.browser = browser.launcher
        settings.announce = { _, _ in }
        let made = try OidcSessions(directory: folder)
        let signedIn = try await made.signIn("work", settings: OidcSessionSettings(
            issuer: try #require(TestProvider.issuer), clientId: "coffer-public", scopes: ["openid"]), agent: LoopbackAgent(settings: settings))

        let sessions = try OidcSessions(directory: folder)
        let current = try await sessions.token("work", minValid: 60)

        #expect(current.accessToken == signedIn.accessToken)
        let summary = try await sessions.summary("work")
        let stored = try #require(try await sessions.settings("work"))
        #expect(summary.subject == "1" && summary.canRefresh && stored.clientId == "coffer-public")
        await #expect(throws: OidcSessionError.notFound("play")) { try await sessions.token("play") }
        await #expect(throws: OidcSessionError.self) { try await sessions.token("../x") }
    }
}
