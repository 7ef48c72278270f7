@testable import CofferOidc
import CofferOrchestrate
import CofferStorage
import Foundation
import Synchronization
import TestSupport
import Testing

/// The loopback redirect listener under attack: a forged redirect arriving first, another local
/// user who read the authorization URL from the browser's command line, junk and huge requests,
/// a busy socket table, a cancelled sign-in.
@Suite("The loopback agent, attacked", .enabled(if: TestProvider.isRunning, TestProvider.skipReason), .timeLimit(.minutes(3)))
struct LoopbackAttackTests {
    /// The sign-in's port and state, once the agent has opened the browser.
    static func opened(_ browser: Browser) async throws -> (port: Int, state: String) {
        for _ in 0..<400 {
            if let url = browser.opened.withLock({ $0.first }),
               let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems,
               let redirect = items.first(where: { $0.name == "redirect_uri" })?.value.flatMap(URL.init(string:)),
               let port = redirect.port, let state = items.first(where: { $0.name == "state" })?.value {
                return (port, state)
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw CocoaError(.fileReadUnknown)
    }

    /// `curl` against the listener: the HTTP status, or 0 when the connection failed.
    static func curl(_ url: String, asSecondUser: Bool = false) async throws -> Int {
        let script = "curl -s -o /dev/null -w '%{http_code}' --max-time 10 '\(url)'"
        let result = asSecondUser
            ? try await SecondUser.run(script)
            : try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", script])
        return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    @Test("a redirect with a wrong state reaching the listener first is answered 400 and never exchanged; the real one still signs in")
    func wrongStateFirst() async throws {
        let browser = Browser(holding: true)
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let signIn = Task { try await OidcClient(config: config).token().get() }
        let (port, state) = try await Self.opened(browser)
        #expect(try await Self.curl("http://127.0.0.1:\(port)/callback?code=forged&state=not-\(state)") == 400)
        #expect(try await Self.curl("http://127.0.0.1:\(port)/callback?code=forged") == 400)
        #expect(try await Self.curl("http://127.0.0.1:\(port)/elsewhere?code=forged&state=\(state)") == 404)
        browser.release()
        let token = try await signIn.value
        #expect(try await TestProvider.userinfoStatus(token.accessToken) == 200)
        #expect(browser.log.last == "answer 200", "\(browser.log)")
    }

    @Test("another local user who knows the state is refused 403, unread; the sign-in goes on", .enabled(if: SecondUser.available, "needs a second local user (root)"))
    func secondUser() async throws {
        let browser = Browser(holding: true)
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let signIn = Task { try await OidcClient(config: config).token().get() }
        let (port, state) = try await Self.opened(browser)
        // Their own code, with our state: were it taken, we would store their session.
        #expect(try await Self.curl("http://127.0.0.1:\(port)/callback?code=theirs&state=\(state)", asSecondUser: true) == 403)
        browser.release()
        let token = try await signIn.value
        #expect(try await TestProvider.userinfoStatus(token.accessToken) == 200)
    }

    @Test("junk, a POST, a request past 16 KiB and a silent connection do not end the wait")
    func junk() async throws {
        let browser = Browser(holding: true)
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let signIn = Task { try await OidcClient(config: config).token().get() }
        let (port, _) = try await Self.opened(browser)
        let long = String(repeating: "a", count: 40_000)
        #expect(try await Self.curl("http://127.0.0.1:\(port)/callback?x=\(long)") == 400)
        let posted = try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/sh"),
            ["-c", "curl -s -o /dev/null -w '%{http_code}' --max-time 10 -d code=x http://127.0.0.1:\(port)/callback"])
        #expect(posted.stdout == "400")
        // A connection that sends nothing holds the listener 5 s at most.
        let silent = try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/bash"),
            ["-c", "exec 3<>/dev/tcp/127.0.0.1/\(port) && sleep 1 && exec 3>&-"])
        #expect(silent.status == 0)
        browser.release()
        let token = try await signIn.value
        #expect(try await TestProvider.userinfoStatus(token.accessToken) == 200)
    }

    @Test("the provider's refusal (access_denied with the right state) ends the sign-in with its words; nothing is stored")
    func refused() async throws {
        let browser = Browser(holding: true)
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let signIn = Task { await OidcClient(config: config).token() }
        let (port, state) = try await Self.opened(browser)
        let issuer = try #require(TestProvider.issuer?.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        #expect(try await Self.curl("http://127.0.0.1:\(port)/callback?error=access_denied&error_description=no%1b%5b2J&state=\(state)&iss=\(issuer)") == 200)
        let result = await signIn.value
        guard case .failure(let error) = result else { Issue.record("\(result)"); return }
        #expect(error.errorMessage.contains("access_denied") && !error.errorMessage.contains("\u{1b}"))
        #expect(try await config.storage.get() == nil)
        browser.release()
    }

    @Test("a redirect naming another issuer (RFC 9207) is refused, nothing exchanged")
    func mixUp() async throws {
        let browser = Browser(holding: true)
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let signIn = Task { await OidcClient(config: config).token() }
        let (port, state) = try await Self.opened(browser)
        #expect(try await Self.curl("http://127.0.0.1:\(port)/callback?code=x&state=\(state)&iss=https%3A%2F%2Fevil.example") == 400)
        let result = await signIn.value
        guard case .failure(let error) = result else { Issue.record("\(result)"); return }
        #expect(error.errorMessage.contains("RFC 9207"))
        browser.release()
    }

    @Test("a redirect without iss, from a provider that always sends one (RFC 9207), is refused, nothing exchanged")
    func missingIssuer() async throws {
        let browser = Browser(holding: true)
        defer { browser.remove() }
        let config = TestProvider.config(browser: browser)
        let signIn = Task { await OidcClient(config: config).token() }
        let (port, state) = try await Self.opened(browser)
        #expect(config.openId?.authorizationResponseIssParameterSupported == true, "the provider says it names itself")
        #expect(try await Self.curl("http://127.0.0.1:\(port)/callback?code=x&state=\(state)") == 400)
        let result = await signIn.value
        guard case .failure(let error) = result else { Issue.record("\(result)"); return }
        #expect(error.errorMessage.contains("did not name its issuer"))
        #expect(try await config.storage.get() == nil)
        browser.release()
    }

    @Test("a cancelled sign-in stops listening at once")
    func cancelled() async throws {
        let browser = Browser(holding: true)
        defer { browser.remove() }
        var settings = LoopbackAgent.Settings()
        settings.browser = browser.launcher
        settings.announce = { _, _ in }
        let config = TestProvider.config()
        let agent = LoopbackAgent(settings: settings)
        let signIn = Task { try await agent.authorize(oidcConfig: OidcConfig(oidcClientConfig: config, config: settings)) }
        let (port, _) = try await Self.opened(browser)
        let started = ContinuousClock.now
        signIn.cancel()
        // The listener stops within its poll interval (a quarter of a second) once its thread
        // runs; on a machine running the whole suite that can take seconds, but never the 60 s
        // the sign-in would otherwise wait.
        var closed = false
        while !closed, ContinuousClock.now - started < .seconds(40) {
            closed = try await Self.curl("http://127.0.0.1:\(port)/callback") == 0
        }
        #expect(closed, "the port is closed")
        await #expect(throws: CancellationError.self) { try await signIn.value }
        browser.release()
    }

    @Test("the peer's owner is found in a socket table past its first pages, and an unknown peer is nobody's")
    func socketTable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var peer = sockaddr_in(), local = sockaddr_in()
        peer.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        peer.sin_port = UInt16(40_000).bigEndian
        local.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        local.sin_port = UInt16(8080).bigEndian
        let header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        let filler = (0..<500).map { "  \($0): 0100007F:\(String(1000 + $0, radix: 16, uppercase: true)) 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 20 4 30 10 -1\n" }
        let match = "  501: \(LoopbackPeer.address(peer)) \(LoopbackPeer.address(local)) 01 00000000:00000000 00:00000000 00000000  1234        0 2 1 0000000000000000 20 4 30 10 -1\n"
        #expect(LoopbackPeer.address(local) == "0100007F:1F90")
        let table = directory.appending("tcp")
        try (header + filler.joined() + match).write(to: table, atomically: true, encoding: .ascii)
        #expect(LoopbackPeer.owner(peer: peer, local: local, table: table.path) == 1234)
        peer.sin_port = UInt16(40_001).bigEndian
        #expect(LoopbackPeer.owner(peer: peer, local: local, table: table.path) == nil)
    }
}
