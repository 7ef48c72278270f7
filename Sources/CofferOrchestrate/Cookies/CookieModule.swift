import CofferMFACommons
import CofferStorage
import Foundation
import Synchronization
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
///   that sent it, a `Secure` cookie over plain http, one larger than 4096 bytes, one with
///   control characters, or one past ``largestJar`` cookies of its host is refused and logged
///   by name (``CookieRefusal``); a wider `Domain` is narrowed to the host; `Max-Age=0` deletes;
///   an answer over plain http cannot replace or delete a `Secure` cookie.
/// - A cookie is sent only where it belongs: its host, its path, https when it is `Secure`.
/// - Keeping cookies is one locked step across processes: two processes that receive cookies
///   at once both keep theirs (the storage's `ExclusiveSection`, through `CookieStore`), and
///   each request reads the kept cookies afresh, so a sign-off or a new session cookie in
///   another process is seen.
/// - ``signOff(_:)`` wins over an answer still on its way: cookies it brings are dropped.
/// - A storage that fails is an error, not a cookie silently lost. With no ``CookieConfig/persist``
///   names, the storage is never touched.
///
/// ``CookieConfig/persist`` and ``CookieConfig/cookieStorage`` are read at each request, so they
/// can change after the module is made.
public final class CookieModule: Sendable {
    /// The most cookies one host may have kept, in memory and in the storage alike; the whole of
    /// either holds at most 16 times as many.
    public static let largestJar = 64

    /// The bounds every merge of this module's cookies keeps to.
    public static func rules(secure: Bool) -> CookieMergeRules {
        CookieMergeRules(perDomain: largestJar, total: largestJar * 16, fromSecureOrigin: secure)
    }

    /// What the module was made with.
    public let config: CookieConfig

    private struct State: Sendable {
        var store: CookieStore?
        var storeKey: (names: [String], storage: ObjectIdentifier)?
        var signOffs = 0
    }
    private let state = Mutex(State())

    /// A module that keeps cookies as `config` says.
    public init(config: CookieConfig = CookieConfig()) {
        self.config = config
    }

    /// The store for the current ``CookieConfig/persist`` names and storage; `nil` without names.
    private var store: CookieStore? {
        let names = config.persist.sorted()
        guard !names.isEmpty else { return nil }
        let storage = config.cookieStorage
        return state.withLock { state in
            if let store = state.store, let key = state.storeKey, key.names == names, key.storage == ObjectIdentifier(storage) {
                return store
            }
            let store = CookieStore(persist: names, storage: storage)
            state.store = store
            state.storeKey = (names, ObjectIdentifier(storage))
            return store
        }
    }

    /// How many sign-offs there have been: an answer to a request sent before the latest one
    /// brings no cookie.
    var signOffCount: Int { state.withLock { $0.signOffs } }

    /// Sets `request`'s `Cookie` header to the cookies that belong to its URL, those kept across
    /// runs and those of this process (a cookie the header already names with a value of the
    /// caller's is left to the caller's value).
    public func prepare(_ request: Request, now: Date = Date()) async throws {
        var urlRequest = request.urlRequest
        guard let url = urlRequest.url else { return }
        let kept = try await store?.cookies(now: now).filter { $0.isSent(to: url, now: now) } ?? []
        let memory = await config.inMemoryStorage.cookies(for: url, now: now)
        let ours = Cookie.merge(memory, over: kept, now: now).filter(\.isWritable)
        guard !ours.isEmpty else { return }
        let ourNames = Set(ours.map(\.name))
        let theirs = (urlRequest.value(forHTTPHeaderField: "Cookie") ?? "")
            .split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { pair in !pair.isEmpty && !ourNames.contains(String(pair.prefix { $0 != "=" })) }
        urlRequest.setValue((theirs + [Cookie.header(for: ours)]).joined(separator: "; "), forHTTPHeaderField: "Cookie")
        request.url(urlRequest)
    }

    /// Keeps the cookies `response` sets: those named in ``CookieConfig/persist`` in the
    /// storage, in one locked step; the others in memory. Returns what was refused (each is
    /// also logged, by name).
    @discardableResult
    public func receive(_ response: URLResponse, now: Date = Date()) async throws -> [CookieRefusal] {
        try await receive(response, now: now, sentAfter: signOffCount)
    }

    /// ``receive(_:now:)`` for an answer to a request sent when ``signOffCount`` was
    /// `signOffs`: after a later sign-off it keeps nothing.
    func receive(_ response: URLResponse, now: Date = Date(), sentAfter signOffs: Int) async throws -> [CookieRefusal] {
        guard let response = response as? HTTPURLResponse, let url = response.url else { return [] }
        var (cookies, refused) = SetCookieReader(url: url, now: now).read(response)
        guard !cookies.isEmpty || !refused.isEmpty else { return [] }
        // Checked again inside each locked step: a sign-off that runs meanwhile wins.
        let current: @Sendable () -> Bool = { [self] in signOffCount == signOffs }
        guard current() else { return [] }
        let rules = Self.rules(secure: url.scheme?.lowercased() == "https")
        let store = self.store
        let persisted = cookies.filter { store?.persist.contains($0.name) ?? false }
        if let store, !persisted.isEmpty {
            guard let outcome = try await store.merge(persisted, now: now, rules: rules, if: current) else { return [] }
            refused += Self.refusals(outcome)
        }
        let others = cookies.filter { !(store?.persist.contains($0.name) ?? false) }
        if !others.isEmpty {
            guard let outcome = await config.inMemoryStorage.setCookies(others, now: now, rules: rules, if: current) else { return [] }
            refused += Self.refusals(outcome)
        }
        for refusal in refused { LogManager.logger.w("\(refusal)", error: nil) }
        return refused
    }

    private static func refusals(_ outcome: CookieMergeOutcome) -> [CookieRefusal] {
        outcome.overLimit.map { .tooMany(name: $0.name) } + outcome.shadowingSecure.map { .secureShadowed(name: $0.name) }
    }

    /// Signs off: sets `request`'s cookies (the sign-off request, when there is one), then
    /// forgets every cookie, kept or in memory. Answers to requests sent before it keep none.
    public func signOff(_ request: Request? = nil) async throws {
        if let request { try await prepare(request) }
        state.withLock { $0.signOffs += 1 }
        await config.inMemoryStorage.deleteAll()
        try await store?.clear()
    }
}
