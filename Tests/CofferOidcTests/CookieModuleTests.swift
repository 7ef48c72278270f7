@testable import CofferOrchestrate
import CofferStorage
import Foundation
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a server's `Set-Cookie` can and cannot make a CookieModule keep and send. The answers
/// are crafted (a server under an attacker's control), the storage is a real encrypted file.
@Suite("CookieModule")
struct CookieModuleTests {
    static func answer(_ url: String, _ setCookie: String) -> HTTPURLResponse {
        HTTPURLResponse(url: URL(string: url)!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Set-Cookie": setCookie])!
    }

    static func module(in folder: URL, persist: [String] = ["ST", "ST-NO-SS"]) -> CookieModule {
        let config = CookieConfig()
        config.persist = persist
        config.cookieStorage = EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: folder)
        return CookieModule(config: config)
    }

    static func header(_ module: CookieModule, for url: String) async throws -> String? {
        let request = Request()
        request.url(url)
        try await module.prepare(request)
        return request.urlRequest.value(forHTTPHeaderField: "Cookie")
    }

    @Test("several Set-Cookie values joined by commas, Expires dates with commas of their own, commas inside values")
    func splitsJoinedHeaders() {
        #expect(SetCookieReader.split("a=1; Expires=0, b=2") == ["a=1; Expires=0", "b=2"])
        #expect(SetCookieReader.split("sid=a,b; Secure; Path=/") == ["sid=a,b; Secure; Path=/"], "a comma not followed by name= stays in the value")
        let parts = SetCookieReader.split("ST=a; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/, ST-NO-SS=b, other=c; expires=Thursday, 09-May-99 21:38:44 GMT")
        #expect(parts.count == 3)
        let reader = SetCookieReader(url: URL(string: "https://am.example.com/am/json")!, now: Date())
        let cookies = parts.compactMap { try? reader.cookie(from: $0)?.get() }
        #expect(cookies.map(\.name) == ["ST", "ST-NO-SS", "other"])
        #expect(cookies[0].expiresAt.map { $0.timeIntervalSinceNow } ?? 0 <= 400 * 86_400 + 1, "a far Expires is capped at 400 days")
        #expect(cookies[1].path == "/am", "the default path is the directory of the request's path")
    }

    @Test("persisted cookies are sealed in the file, read back by another module, and only where they belong")
    func persistsAndSendsWhereTheyBelong() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let refused = try await Self.module(in: temporary.url).receive(Self.answer(
            "https://am.example.com/am/json/authenticate",
            "ST=secret-session-value; Domain=example.com; Path=/am; Secure; HttpOnly, scratch=1; Path=/"))
        #expect(refused.isEmpty)
        #expect(!(try Data(contentsOf: temporary.url.appendingPathComponent("cookies"))).contains(Data("secret-session-value".utf8)))

        let later = Self.module(in: temporary.url)
        #expect(try await Self.header(later, for: "https://am.example.com/am/oauth2/authorize") == "ST=secret-session-value")
        #expect(try await Self.header(later, for: "https://other.example.com/am/x") == nil, "a wider Domain is narrowed to the host that set it")
        #expect(try await Self.header(later, for: "http://am.example.com/am/x") == nil, "a Secure cookie never goes over http")
        #expect(try await Self.header(later, for: "https://am.example.com/amx") == nil, "/am does not cover /amx")
        #expect(try await Self.header(later, for: "https://example.org/am") == nil)
        #expect(try await Self.header(later, for: "https://am.example.com.evil.test/am") == nil)
    }

    @Test("a server cannot set a cookie for another domain, for a shared suffix (co.uk, net), or Secure over http")
    func refusesForeignCookies() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let module = Self.module(in: temporary.url, persist: ["ST"])
        let refused = try await module.receive(Self.answer("http://evil.example.net/",
            "ST=planted; Domain=bank.example.com, ST=planted; Domain=net, ST=planted; Domain=example.net; Secure"))
        #expect(refused == [.foreignDomain(name: "ST", domain: "bank.example.com"), .secureOverHTTP(name: "ST")])
        #expect(try await EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: temporary.url).get()?.map(\.domain) == ["evil.example.net"],
                "Domain=net is narrowed to the host that sent it")
        #expect(try await Self.header(module, for: "https://bank.example.com/") == nil)
        #expect(try await Self.header(module, for: "http://other.net/") == nil)

        try await module.receive(Self.answer("https://evil.co.uk/", "ST=fixated; Domain=co.uk; Max-Age=34560000"))
        #expect(try await Self.header(module, for: "https://bank.co.uk/") == nil, "no public-suffix list: a wider Domain reaches no other site")
        #expect(SetCookieReader.isAddress("10.0.0.1") && SetCookieReader.isAddress("::1"))
        #expect(!SetCookieReader.isAddress("face.be") && !SetCookieReader.isAddress("a.bad.de"))

        let address = try await module.receive(Self.answer("http://127.0.0.1:8080/", "ST=x; Domain=0.0.1"))
        #expect(address == [.foreignDomain(name: "ST", domain: "0.0.1")], "an address takes no Domain but itself")
    }

    @Test("Max-Age=0 and a past Expires delete a kept cookie; Max-Age wins over Expires")
    func deletion() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let module = Self.module(in: temporary.url)
        try await module.receive(Self.answer("https://am.example.com/", "ST=one; Path=/, ST-NO-SS=two; Path=/"))
        try await module.receive(Self.answer("https://am.example.com/", "ST=; Max-Age=0; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/"))
        #expect(try await Self.header(module, for: "https://am.example.com/") == "ST-NO-SS=two")
        try await module.receive(Self.answer("https://am.example.com/", "ST-NO-SS=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/"))
        #expect(try await Self.header(module, for: "https://am.example.com/") == nil)
        #expect(try await EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: temporary.url).get() == [])
    }

    @Test("huge, control-character and countless cookies are refused by name, never by value")
    func boundedJar() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let module = Self.module(in: temporary.url, persist: ["ST"])
        let huge = String(repeating: "v", count: 5000)
        let refused = try await module.receive(Self.answer("https://am.example.com/", "ST=\(huge)"))
        #expect(refused == [.tooLarge(name: "ST")])
        let reader = SetCookieReader(url: URL(string: "https://am.example.com/")!, now: Date())
        let escape = try #require(reader.cookie(from: "x\u{1B}[2J=1"))
        #expect(throws: CookieRefusal.malformed(name: "x\u{1B}[2J")) { try escape.get() }
        let inValue = try #require(reader.cookie(from: "ST=a\u{1B}[2Jb"))
        #expect(throws: CookieRefusal.malformed(name: "ST")) { try inValue.get() }
        #expect(!refused.map(\.description).joined().contains(huge))
        #expect(!CookieRefusal.malformed(name: "x\u{1B}[2J").description.contains("\u{1B}"))

        let many = (0..<100).map { "c\($0)=v; Path=/p\($0)" }.joined(separator: ", ")
        let overflow = try await module.receive(Self.answer("https://am.example.com/", many))
        #expect(overflow.count == 100 - CookieModule.largestJar)
        #expect(await module.config.inMemoryStorage.all.count == CookieModule.largestJar)

        let kept = (0..<100).map { "ST=v; Path=/p\($0)" }.joined(separator: ", ")
        let keptOverflow = try await module.receive(Self.answer("https://am.example.com/", kept))
        #expect(keptOverflow == Array(repeating: .tooMany(name: "ST"), count: 100 - CookieModule.largestJar))
        #expect(try await EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: temporary.url).get()?.count == CookieModule.largestJar)
    }

    @Test("four processes keeping 12 cookies each in one file, one answer at a time, all at once: none is lost (the file's exclusive section)")
    func concurrentProcessesKeepAll() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let run = try await CofferProcess.stressAtOnce(["cookie-receive", temporary.url.path, "12"], processes: 4)
        #expect(run.allSucceeded, "\(run.failures)")
        let printed = Set(run.results.flatMap { $0.stdout.split(separator: "\n").map(String.init) })
        let kept = try await EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: temporary.url).get() ?? []
        #expect(printed.count == 48)
        #expect(Set(kept.map(\.name)) == printed)
    }

    @Test("the article's example: a client whose session cookies another client of the same configuration sends")
    func articleExample() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url

        let cookies = CookieConfig()
        cookies.persist = ["ST", "ST-NO-SS"]
        cookies.storage { file in
            file.directory = folder
        }
        let client = HttpClient()
        client.cookies = CookieModule(config: cookies)

        try await client.cookies?.receive(Self.answer("https://am.example.com/am/json", "ST=session; Path=/; Secure, tmp=1; Path=/"))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("com.pingidentity.sdk.v1.cookies").path))
        let again = CookieConfig()
        again.persist = ["ST", "ST-NO-SS"]
        again.storage { $0.directory = folder }
        #expect(try await Self.header(CookieModule(config: again), for: "https://am.example.com/am/x") == "ST=session", "tmp stayed in the first process")
        try await client.cookies?.signOff()
        #expect(try await Self.header(CookieModule(config: again), for: "https://am.example.com/am/x") == nil)
    }

    @Test("HttpClient's own session keeps no cookie: only a CookieModule sends one")
    func sessionKeepsNoCookies() {
        let configuration = HttpClient.makeSession().configuration
        #expect(configuration.httpCookieStorage == nil && !configuration.httpShouldSetCookies)
    }

    @Test("the spec's Android options map onto an EncryptedFileStorage named com.pingidentity.sdk.v1.cookies by default")
    func androidOptions() throws {
        let config = CookieConfig()
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        config.storage { file in
            file.directory = temporary.url
            file.cacheStrategy = .cacheOnFailure
        }
        let storage = try #require(config.cookieStorage as? EncryptedFileStorage<[Cookie]>)
        #expect(storage.fileURL.lastPathComponent == "com.pingidentity.sdk.v1.cookies")
    }
}
