import CofferMFACommons
import CofferStorage
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends and keeps a server's cookies, as Ping's `CookieModule` does in its workflows: the
/// cookies named in ``CookieConfig/persist`` survive the process, sealed in
/// ``CookieConfig/cookieStorage``; the others live in ``CookieConfig/inMemoryStorage``.
///
/// Give it to an ``HttpClient`` (``HttpClient/cookies``) and every request carries the cookies
/// that belong to its URL, and every answer's `Set-Cookie` is kept:
///
/// ```swift
/// let config = CookieConfig()
/// config.persist = ["iPlanetDirectoryPro"]
/// let client = HttpClient()
/// client.cookies = CookieModule(config: config)
/// ```
///
/// Better than Ping's:
/// - `Set-Cookie` is read as RFC 6265 says: a cookie whose `Domain` does not cover the host
///   that sent it, a `Secure` cookie over plain http, one larger than 4096 bytes, or one past
///   ``largestJar`` is refused and logged by name (``CookieRefusal``); `Max-Age=0` deletes.
/// - A cookie is sent only where it belongs: its domain, its path, https when it is `Secure`.
/// - Keeping cookies is one locked step across processes: two processes that receive cookies
///   at once both keep theirs (the storage's `ExclusiveSection`, through `CookieStore`).
/// - A storage that fails is an error, not a cookie silently lost.
public final class CookieModule: Sendable {
    /// The most cookies a jar (persisted or in memory) holds.
    public static let largestJar = 64

    /// What the module was made with.
    public let config: CookieConfig
    private let store: CookieStore

    /// A module that keeps cookies as `config` says. ``CookieConfig/persist`` and
    /// ``CookieConfig/cookieStorage`` are read now: set them first.
    public init(config: CookieConfig = CookieConfig()) {
        self.config = config
        self.store = CookieStore(persist: config.persist, storage: config.cookieStorage)
    }

    /// Adds the cookies that belong to `request`'s URL to its `Cookie` header: those kept
    /// across runs and those of this process.
    public func prepare(_ request: Request, now: Date = Date()) async throws {
        guard let url = request.urlRequest.url else { return }
        let kept = try await store.cookies(now: now).filter { $0.isSent(to: url, now: now) }
        let memory = await config.inMemoryStorage.cookies(for: url, now: now)
        let cookies = Cookie.merge(memory, over: kept, now: now)
        guard !cookies.isEmpty else { return }
        request.header(name: "Cookie", value: Cookie.header(for: cookies))
    }

    /// Keeps the cookies `response` sets: those named in ``CookieConfig/persist`` in the
    /// storage, in one locked step; the others in memory. Returns what was refused (each is
    /// also logged, by name).
    @discardableResult
    public func receive(_ response: URLResponse, now: Date = Date()) async throws -> [CookieRefusal] {
        guard let response = response as? HTTPURLResponse, let url = response.url else { return [] }
        var (cookies, refused) = SetCookieReader(url: url, now: now).read(response)
        let persisted = cookies.filter { store.persist.contains($0.name) }
        if !persisted.isEmpty {
            refused += try await store.merge(persisted, now: now, limit: Self.largestJar).refused.map { .tooMany(name: $0.name) }
        }
        for cookie in cookies where !store.persist.contains(cookie.name) {
            if !(await config.inMemoryStorage.setCookie(cookie, now: now)) { refused.append(.tooMany(name: cookie.name)) }
        }
        for refusal in refused { LogManager.logger.w("\(refusal)", error: nil) }
        return refused
    }

    /// Signs off: adds the cookies to `request` (the sign-off request, when there is one), then
    /// forgets every cookie, kept or in memory.
    public func signOff(_ request: Request? = nil) async throws {
        if let request { try await prepare(request) }
        try await store.clear()
        await config.inMemoryStorage.deleteAll()
    }
}
