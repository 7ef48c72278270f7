@testable import CofferOrchestrate
import CofferStorage
import Foundation
import Synchronization
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server under an attacker's control, for the cookie tests: it answers every request with
/// the `Set-Cookie` and status it is told, after the delay it is told, and records the `Cookie`
/// header each request carried.
final class CookieServer: URLProtocol, @unchecked Sendable {
    // @unchecked Sendable: the shared state is `state`, a Mutex.
    struct State {
        var setCookie = ""
        var status = 200
        var location: String?
        var delay: Duration = .zero
        var seen: [(url: String, cookie: String?)] = []
    }
    static let state = Mutex(State())

    static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [CookieServer.self]
        return URLSession(configuration: configuration)
    }

    override class func canInit(with request: URLRequest) -> Bool { request.url?.host?.hasSuffix(".cookies.test") ?? false }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let (setCookie, status, location, delay) = Self.state.withLock { state in
            state.seen.append((request.url?.absoluteString ?? "", request.value(forHTTPHeaderField: "Cookie")))
            return (state.setCookie, state.status, state.location, state.delay)
        }
        if delay > .zero { Thread.sleep(forTimeInterval: Double(delay.components.seconds)) }
        var headers = ["Set-Cookie": setCookie]
        if let location { headers["Location"] = location }
        let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data())
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

/// The attack review's findings on the cookie module, each as it was found.
@Suite("CookieModule attacked", .serialized)
struct CookieAttackTests {
    static func client(_ folder: URL, persist: [String] = ["ST"], session: URLSession = CookieServer.session()) -> HttpClient {
        let client = HttpClient(session: session)
        client.cookies = CookieModuleTests.module(in: folder, persist: persist)
        return client
    }

    static func get(_ client: HttpClient, _ url: String) async throws -> HTTPURLResponse? {
        let request = Request()
        request.url(url)
        request.method(.get)
        return try await client.sendRequest(request: request).1 as? HTTPURLResponse
    }

    @Test("a redirect to another host on a session of the caller's is not followed: the Cookie header goes nowhere else")
    func noCookiesThroughRedirects() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let client = Self.client(temporary.url)
        CookieServer.state.withLock { $0 = .init(); $0.setCookie = "ST=session; Path=/; Secure" }
        _ = try await Self.get(client, "https://am.cookies.test/login")
        CookieServer.state.withLock { $0 = .init(); $0.status = 302; $0.location = "https://evil.cookies.test/steal" }
        let answer = try await Self.get(client, "https://am.cookies.test/next")
        #expect(answer?.statusCode == 302, "the redirect is returned, not followed")
        let seen = CookieServer.state.withLock { $0.seen }
        #expect(seen.map(\.url) == ["https://am.cookies.test/next"])
        #expect(seen.first?.cookie == "ST=session")
    }

    @Test("an answer over plain http cannot replace or delete a Secure cookie of its name")
    func httpCannotShadowSecure() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let module = CookieModuleTests.module(in: temporary.url, persist: ["ST"])
        try await module.receive(CookieModuleTests.answer("https://am.example.com/", "ST=real; Path=/; Secure"))
        let replaced = try await module.receive(CookieModuleTests.answer("http://am.example.com/", "ST=planted; Path=/"))
        let deleted = try await module.receive(CookieModuleTests.answer("http://am.example.com/", "ST=; Path=/; Max-Age=0"))
        #expect(replaced == [.secureShadowed(name: "ST")] && deleted == [.secureShadowed(name: "ST")])
        #expect(try await CookieModuleTests.header(module, for: "https://am.example.com/") == "ST=real")
        #expect(try await CookieModuleTests.header(module, for: "http://am.example.com/") == nil)
    }

    @Test("a sign-off wins over an answer still on its way: the cookie it brings is not kept")
    func signOffWinsOverAnswerInFlight() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let client = Self.client(temporary.url)
        CookieServer.state.withLock { $0 = .init(); $0.setCookie = "ST=late; Path=/"; $0.delay = .seconds(1) }
        async let answer = Self.get(client, "https://am.cookies.test/slow")
        while CookieServer.state.withLock({ $0.seen.isEmpty }) { try await Task.sleep(for: .milliseconds(10)) }
        try await client.cookies?.signOff()   // the request is at the server, its answer a second away
        _ = try await answer
        #expect(try await EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: temporary.url).get() == nil)
        #expect(try await CookieModuleTests.header(client.cookies!, for: "https://am.cookies.test/") == nil)
    }

    @Test("a long-lived module sees another's new session cookie and sign-off, through a caching storage")
    func noStaleCopies() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        func module() -> CookieModule {
            let config = CookieConfig()
            config.persist = ["ST"]
            config.cookieStorage = EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: temporary.url, cacheStrategy: .cache)
            return CookieModule(config: config)
        }
        let long = module(), other = module()
        #expect(try await CookieModuleTests.header(long, for: "https://am.example.com/") == nil)
        try await other.receive(CookieModuleTests.answer("https://am.example.com/", "ST=new; Path=/"))
        #expect(try await CookieModuleTests.header(long, for: "https://am.example.com/") == "ST=new")
        try await other.signOff()
        #expect(try await CookieModuleTests.header(long, for: "https://am.example.com/") == nil)
    }

    @Test("one host filling its jar does not crowd out another host's cookies")
    func perHostLimit() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let module = CookieModuleTests.module(in: temporary.url, persist: ["ST"])
        let flood = (0..<80).map { "ST=x; Path=/p\($0)" }.joined(separator: ", ")
        let refused = try await module.receive(CookieModuleTests.answer("https://flood.example.com/", flood))
        #expect(refused.count == 80 - CookieModule.largestJar)
        #expect(try await module.receive(CookieModuleTests.answer("https://bank.example.com/", "ST=mine; Path=/")).isEmpty)
        #expect(try await CookieModuleTests.header(module, for: "https://bank.example.com/") == "ST=mine")
    }

    @Test("a request sent twice carries each cookie once, beside a Cookie header of the caller's")
    func headerSetNotAppended() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let module = CookieModuleTests.module(in: temporary.url, persist: ["ST"])
        try await module.receive(CookieModuleTests.answer("https://am.example.com/", "ST=s; Path=/"))
        let request = Request()
        request.url("https://am.example.com/x")
        request.header(name: "Cookie", value: "theirs=1")
        try await module.prepare(request)
        try await module.prepare(request)
        #expect(request.urlRequest.value(forHTTPHeaderField: "Cookie") == "theirs=1; ST=s")
    }

    @Test("with no persist names the storage is never touched: a storage that fails does not fail requests")
    func noPersistNoStorage() async throws {
        struct Broken: Storage {
            func save(item: [Cookie]) async throws { throw StorageError.io(operation: "read", path: "broken", code: EIO) }
            func get() async throws -> [Cookie]? { throw StorageError.io(operation: "read", path: "broken", code: EIO) }
            func delete() async throws { throw StorageError.io(operation: "read", path: "broken", code: EIO) }
        }
        let config = CookieConfig()
        config.cookieStorage = StorageDelegate(delegate: Broken())
        let module = CookieModule(config: config)
        try await module.receive(CookieModuleTests.answer("https://am.example.com/", "tmp=1; Path=/"))
        #expect(try await CookieModuleTests.header(module, for: "https://am.example.com/") == "tmp=1")
        try await module.signOff()

        config.persist = ["ST"]
        await #expect(throws: StorageError.self, "names set after the module was made take effect") {
            try await module.receive(CookieModuleTests.answer("https://am.example.com/", "ST=1; Path=/"))
        }
    }

    @Test("control characters in an attribute are refused; a cookie's description escapes what it shows")
    func controlsEverywhere() async throws {
        let reader = SetCookieReader(url: URL(string: "https://am.example.com/")!, now: Date())
        #expect(throws: CookieRefusal.malformed(name: "ST")) { try reader.cookie(from: "ST=1; Path=/\u{1B}]52;c;x\u{07}")!.get() }
        #expect(throws: CookieRefusal.malformed(name: "S\u{9B}T")) { try reader.cookie(from: "S\u{9B}T=1")!.get() }
        #expect(throws: CookieRefusal.malformed(name: "ST")) { try reader.cookie(from: "ST=a\u{202E}b")!.get() }
        let stored = Cookie(name: "x", value: "v", domain: "h", path: "/\u{1B}[2J")
        #expect(!stored.description.contains("\u{1B}") && stored.isWritable)
        #expect(!Cookie(name: "x", value: "a\r\nInjected: 1", domain: "h").isWritable)
    }

    @Test("a path with a trailing slash is matched as sent; Max-Age must be digits")
    func pathsAndMaxAge() throws {
        let reader = SetCookieReader(url: URL(string: "https://am.example.com/am/")!, now: Date())
        let cookie = try reader.cookie(from: "ST=1; Path=/am/")!.get()
        #expect(cookie.isSent(to: URL(string: "https://am.example.com/am/")!))
        #expect(try reader.cookie(from: "ST=1")!.get().path == "/am", "the default path of /am/ is /am")
        #expect(try reader.cookie(from: "ST=1; Max-Age=+5")!.get().expiresAt == nil, "+5 is not a Max-Age")
        #expect(try reader.cookie(from: "ST=1; Max-Age=-99999999999999999999999")!.get().isExpired(), "a huge negative Max-Age deletes")
    }

    @Test("an account never names another file of the data directory; one that cannot be a file name fails every call")
    func accountNamesAreNamespaced() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let database = temporary.url.appendingPathComponent("authenticator.sqlite")
        try Data("not cookies".utf8).write(to: database)
        let choice = try PlatformDefaultStorage.choice(account: "x", fileName: CookieConfig.defaultFileName + ".authenticator.sqlite",
                                                       directory: temporary.url)
        _ = choice
        #expect(throws: PlatformDefaultStorage.ChoiceError.self) {
            try PlatformDefaultStorage.choice(account: "x", fileName: CookieConfig.defaultFileName + "/../../x", directory: temporary.url)
        }
        #expect(try Data(contentsOf: database) == Data("not cookies".utf8))
        try "bogus\n".write(to: temporary.url.appendingPathComponent("t.backend"), atomically: true, encoding: .utf8)
        let error = #expect(throws: PlatformDefaultStorage.ChoiceError.self) {
            try PlatformDefaultStorage.choice(account: "x", fileName: "t", directory: temporary.url)
        }
        #expect(error?.errorDescription?.contains("'keyring' or 'file'") == true)
    }

    @Test("CookieConfig(account:).storage { } keeps each account's cookies in a file of its own")
    func accountsKeepTheirOwnFiles() throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let alice = CookieConfig(account: "alice_cookies"), bob = CookieConfig(account: "bob_cookies")
        alice.storage { $0.directory = temporary.url }
        bob.storage { $0.directory = temporary.url }
        let files = [alice, bob].compactMap { ($0.cookieStorage as? EncryptedFileStorage<[Cookie]>)?.fileURL.lastPathComponent }
        #expect(files == ["com.pingidentity.sdk.v1.cookies.alice_cookies", "com.pingidentity.sdk.v1.cookies.bob_cookies"])
    }
}
