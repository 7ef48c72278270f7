@testable import CofferOidc
import CofferOrchestrate
import CofferStorage
import Foundation
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session cookie of the real provider (Django's `sessionid`, set when alice signs in at its
/// login form) kept by a CookieModule in an encrypted file, and used by another client that
/// shares only the file.
@Suite("CookieModule at the real provider", .enabled(if: TestProvider.isRunning, TestProvider.skipReason), .timeLimit(.minutes(2)))
struct CookieProviderTests {
    static var site: String { String((TestProvider.issuer ?? "").dropLast("/o".count)) }

    /// A client whose cookies named `sessionid` and `csrftoken` are kept in `file`.
    static func client(keepingIn folder: URL) -> HttpClient {
        let config = CookieConfig()
        config.persist = ["sessionid", "csrftoken"]
        config.cookieStorage = EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: folder)
        let client = HttpClient()
        client.cookies = CookieModule(config: config)
        return client
    }

    /// Where the provider sends a request for an authorization code: to its login form without
    /// a session, straight back to the redirect address with one.
    static func authorizeLocation(_ client: HttpClient) async throws -> String {
        let request = Request()
        request.url(TestProvider.issuer! + "/authorize/")
        for (name, value) in ["response_type": "code", "client_id": "coffer-public", "redirect_uri": "http://127.0.0.1:9/callback",
                              "scope": "openid", "code_challenge": Pkce.challenge(for: String(repeating: "v", count: 43)),
                              "code_challenge_method": "S256", "state": "s"] {
            request.parameter(name: name, value: value)
        }
        let (_, response) = try await client.sendRequest(request: request)
        return (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Location") ?? ""
    }

    @Test("signed in once at the provider's form, another client that shares only the cookie file is signed in too")
    func sessionCookieSurvives() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let password = try String(contentsOfFile: (TestProvider.environment["COFFER_TEST_OIDC_STATE"] ?? "") + "/user-password", encoding: .utf8)

        let first = Self.client(keepingIn: temporary.url)
        let form = Request()
        form.url(Self.site + "/accounts/login/")
        form.method(.get)
        let (page, _) = try await first.sendRequest(request: form)
        let html = String(decoding: page, as: UTF8.self)
        let csrf = try #require(html.firstMatch(of: /name="csrfmiddlewaretoken" value="([^"]+)"/)?.1)
        let login = Request()
        login.url(Self.site + "/accounts/login/")
        login.form(formData: ["username": "alice", "password": password, "csrfmiddlewaretoken": String(csrf)])
        let (_, signedIn) = try await first.sendRequest(request: login)
        #expect((signedIn as? HTTPURLResponse)?.statusCode == 302, "the login form refused the sign-in: the csrftoken cookie was not sent back")

        let stored = try await EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: temporary.url).get() ?? []
        #expect(Set(stored.map(\.name)) == ["sessionid", "csrftoken"])
        #expect(!(try Data(contentsOf: temporary.url.appendingPathComponent("cookies"))).contains(Data(stored[0].value.utf8)))

        let second = Self.client(keepingIn: temporary.url)
        let location = try await Self.authorizeLocation(second)
        #expect(location.hasPrefix("http://127.0.0.1:9/callback?code="), "sent to \(location)")

        let stranger = HttpClient()
        #expect(try await Self.authorizeLocation(stranger).contains("/accounts/login/"))

        try await second.cookies?.signOff()
        #expect(try await EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: temporary.url).get() == nil)
        #expect(try await Self.authorizeLocation(Self.client(keepingIn: temporary.url)).contains("/accounts/login/"))
    }
}
