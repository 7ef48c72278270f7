import Foundation
import TestSupport
import CofferStorage
import Testing

@Suite("Tokens and cookies")
struct TokenAndCookieTests {
    @Test("Token decodes the wire names and encodes them back")
    func tokenCoding() throws {
        let json = """
            {"access_token":"at","token_type":"Bearer","scope":"openid profile","expires_in":3600,
             "refresh_token":"rt","id_token":"it","expires_at":1900000000}
            """
        let token = try JSONDecoder().decode(Token.self, from: Data(json.utf8))
        #expect(token == Token(accessToken: "at", tokenType: "Bearer", scope: "openid profile", expiresIn: 3600,
                               refreshToken: "rt", idToken: "it", expiresAt: 1_900_000_000))
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(token)) as! [String: Any]
        #expect(Set(encoded.keys) == ["access_token", "token_type", "scope", "expires_in", "refresh_token", "id_token", "expires_at"])
        #expect(try JSONDecoder().decode(Token.self, from: JSONEncoder().encode(token)) == token)
    }

    @Test("Token also reads the legacy expireAt, and computes expiry from expires_in otherwise")
    func tokenExpiryFields() throws {
        let legacy = try JSONDecoder().decode(Token.self, from: Data(#"{"access_token":"a","expires_in":10,"expireAt":1234}"#.utf8))
        #expect(legacy.expiresAt == 1234)
        let before = Int64(Date().timeIntervalSince1970)
        let computed = try JSONDecoder().decode(Token.self, from: Data(#"{"access_token":"a","expires_in":600}"#.utf8))
        #expect((before + 600...before + 601).contains(computed.expiresAt))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Token.self, from: Data(#"{"expires_in":1}"#.utf8)) }
    }

    @Test("isExpired and isExpired(threshold:)")
    func tokenExpiry() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let token = Token(accessToken: "a", expiresIn: 60, expiresAt: 1_000_060)
        #expect(!token.isExpired(now: now))
        #expect(!token.isExpired(threshold: 59, now: now))
        #expect(token.isExpired(threshold: 60, now: now))
        #expect(token.isExpired(now: Date(timeIntervalSince1970: 1_000_060)))
        #expect(Token(accessToken: "a", expiresIn: -1).isExpired)
        #expect(!Token(accessToken: "a", expiresIn: 3600).isExpired(threshold: 60))
    }

    @Test("Token and Cookie never show secrets in descriptions or dumps")
    func redaction() {
        let token = Token(accessToken: "AT-SECRET", expiresIn: 1, refreshToken: "RT-SECRET", idToken: "ID-SECRET")
        let cookie = Cookie(name: "ST", value: "COOKIE-SECRET", domain: "example.com")
        for text in renderings(of: token) + renderings(of: cookie) {
            #expect(!text.contains("SECRET"), "\(text)")
        }
    }

    @Test("a Token round-trips through an encrypted file")
    func tokenInEncryptedFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = EncryptedFileStorage<Token>(fileName: "com.example.tokens", directory: directory.url)
        let token = Token(accessToken: "at", tokenType: "Bearer", expiresIn: 3600, refreshToken: "rt")
        try await storage.save(item: token)
        #expect(try await storage.get() == token)
    }

    func cookie(_ name: String, _ value: String, expires: TimeInterval? = nil, domain: String = "example.com") -> Cookie {
        Cookie(name: name, value: value, domain: domain, expiresAt: expires.map { Date(timeIntervalSince1970: $0) })
    }

    @Test("the cookie store keeps only persisted names, merges over stored ones and drops expired ones")
    func cookieMerge() async throws {
        let now = Date(timeIntervalSince1970: 1000)
        let store = CookieStore(persist: ["ST", "ST-NO-SS"], storage: MemoryStorage<[Cookie]>())
        try await store.merge([cookie("ST", "1", expires: 2000), cookie("tracking", "x"), cookie("ST-NO-SS", "a", expires: 1500)], now: now)
        #expect(try await store.cookies(now: now).map(\.value) == ["1", "a"])

        // A new ST replaces the old; ST-NO-SS stays; an ST for another domain is a separate cookie.
        try await store.merge([cookie("ST", "2", expires: 3000), cookie("ST", "other", domain: "other.org")], now: now)
        #expect(try await store.cookies(now: now).map(\.value) == ["2", "a", "other"])

        // Time passes: ST-NO-SS expires and is dropped on the next merge.
        let later = Date(timeIntervalSince1970: 1600)
        #expect(try await store.cookies(now: later).map(\.value) == ["2", "other"])
        let merged = try await store.merge([], now: later)
        #expect(merged.map(\.value) == ["2", "other"])

        // A server deletes a cookie by sending it already expired.
        try await store.merge([cookie("ST", "", expires: 0)], now: later)
        #expect(try await store.cookies(now: later).map(\.value) == ["other"])

        try await store.clear()
        #expect(try await store.cookies(now: later).isEmpty)
    }

    @Test("concurrent merges lose no cookie")
    func concurrentMerges() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let names = (0..<20).map { "c\($0)" }
        let store = CookieStore(persist: names, storage: EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: directory.url))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in names { group.addTask { try await store.merge([self.cookie(name, name)]) } }
            try await group.waitForAll()
        }
        #expect(Set(try await store.cookies().map(\.name)) == Set(names))
    }
}
