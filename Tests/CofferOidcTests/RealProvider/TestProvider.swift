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

/// The real OpenID Provider `scripts/test` starts (scripts/with-oidc-provider: django-oauth-toolkit
/// on a loopback port), its test user and clients, and a browser stand-in that signs in at its
/// login form (scripts/oidc-provider/browser.py).
enum TestProvider {
    static let environment = ProcessInfo.processInfo.environment
    /// The issuer, when the provider runs.
    static let issuer = environment["COFFER_TEST_OIDC_ISSUER"]
    static var isRunning: Bool { issuer != nil }
    static let skipReason: Comment = "needs the OpenID Provider that scripts/test starts; run scripts/test"

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let browserScript = root.appendingPathComponent("scripts/oidc-provider/browser.py")

    /// The confidential client's secret, as the provider was set up with it.
    static var clientSecret: String {
        (try? String(contentsOfFile: (environment["COFFER_TEST_OIDC_STATE"] ?? "") + "/client-secret", encoding: .utf8)) ?? ""
    }

    /// A configuration for `clientId` at the provider, tokens in memory, signing in through
    /// `browser` with the loopback agent.
    static func config(clientId: String = "coffer-public", browser: Browser? = nil, scopes: Set<String> = ["openid", "profile", "email"]) -> OidcClientConfig {
        let config = OidcClientConfig()
        config.discoveryEndpoint = (issuer ?? "") + "/.well-known/openid-configuration"
        config.clientId = clientId
        config.scopes = scopes
        config.storage = StorageDelegate(delegate: MemoryStorage<Token>())
        config.httpClient = HttpClient(session: URLSession(configuration: .ephemeral))
        if let browser {
            var settings = LoopbackAgent.Settings()
            settings.browser = browser.launcher
            settings.announce = { _, _ in }
            settings.timeout = .seconds(60)
            config.updateAgent(LoopbackAgent(settings: settings))
        }
        return config
    }

    /// POSTs `form` to one of the provider's endpoints, as a client other than Coffer would:
    /// the status and the decoded JSON answer.
    static func post(_ path: String, _ form: [String: String]) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: (issuer ?? "") + path)!)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(Request.formEncoded(form).utf8)
        let (data, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        return ((response as! HTTPURLResponse).statusCode, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    /// Whether the provider still honours `refreshToken` (it spends it: use only on a token that
    /// is expected to be dead, or last).
    static func refreshes(_ refreshToken: String, clientId: String = "coffer-public") async throws -> Bool {
        let (status, answer) = try await post("/token/", ["grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": clientId])
        if status != 200, status != 400 { Issue.record("the provider answered a refresh \(status): \(answer)") }
        return status == 200
    }

    /// The status of a userinfo request with `accessToken`.
    static func userinfoStatus(_ accessToken: String) async throws -> Int {
        var request = URLRequest(url: URL(string: (issuer ?? "") + "/userinfo/")!)
        request.setValue("Bearer " + accessToken, forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        return (response as! HTTPURLResponse).statusCode
    }
}

/// A browser profile for browser.py: its cookie jar (the provider's session lives there) and a
/// log of what it did ("login", "redirect URL", "answer STATUS", "device accept 200").
final class Browser: Sendable {
    let directory: URL
    /// When set, the redirect to the loopback waits until this file exists.
    let hold: URL?
    /// The URLs the agent asked it to open.
    let opened = Mutex<[URL]>([])

    init(holding: Bool = false) {
        directory = TemporaryDirectory("browser").url
        hold = holding ? directory.appendingPathComponent("release") : nil
    }

    var jar: URL { directory.appendingPathComponent("cookies.lwp") }
    var logFile: URL { directory.appendingPathComponent("browser.log") }

    /// What browser.py logged, one entry per line.
    var log: [String] {
        ((try? String(contentsOf: logFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Lets a held redirect go.
    func release() {
        if let hold { FileManager.default.createFile(atPath: hold.path, contents: Data()) }
    }

    /// Lets a held redirect go (browser.py gives up on its own after a minute), then removes
    /// the profile.
    func remove() {
        release()
        try? FileManager.default.removeItem(at: directory)
    }

    private var overrides: [String: String] {
        var environment: [String: String] = [:]
        environment["COFFER_TEST_BROWSER_JAR"] = jar.path
        environment["COFFER_TEST_BROWSER_LOG"] = logFile.path
        if let hold { environment["COFFER_TEST_BROWSER_HOLD"] = hold.path }
        return environment
    }

    /// Starts browser.py with `arguments` and returns at once (the agent waits for what it does).
    func start(_ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = TestProvider.browserScript
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(overrides) { $1 }
        // Not the test process's own output: a browser still running when the tests end would
        // keep `swift test` waiting for the end of it.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        return (try? process.run()) != nil
    }

    /// Runs browser.py with `arguments` to the end.
    func run(_ arguments: [String]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(executable: TestProvider.browserScript, arguments, environment: overrides, deadline: .seconds(60))
    }

    /// Signs in with `client` (through this browser); a failure names what the browser saw.
    func signIn(_ client: OidcClient) async throws -> Token {
        do {
            return try await client.token().get()
        } catch {
            Issue.record("browser log: \(log)")
            throw error
        }
    }

    /// The launcher the loopback agent uses: browser.py, started with the URL.
    var launcher: BrowserLauncher {
        BrowserLauncher { [self] url in
            opened.withLock { $0.append(url) }
            return start([url.absoluteString])
        }
    }
}
