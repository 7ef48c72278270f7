import CofferStorage
import Foundation

/// The cookies a ``CookieModule`` keeps for this process only: every cookie a server sets whose
/// name is not in ``CookieConfig/persist``. Ping's name; gone when the process ends.
public actor InMemoryCookieStorage {
    private var jar: [Cookie] = []

    /// An empty jar.
    public init() {}

    /// Lays `cookies` over the jar by `rules` (the same name, domain and path replaces; an
    /// expired one removes) and returns what was kept and refused.
    @discardableResult
    public func setCookies(_ cookies: [Cookie], now: Date = Date(), rules: CookieMergeRules = CookieModule.rules(secure: true)) -> CookieMergeOutcome {
        setCookies(cookies, now: now, rules: rules, if: { true }) ?? CookieMergeOutcome(kept: jar, overLimit: [], shadowingSecure: [])
    }

    /// ``setCookies(_:now:rules:)`` only if `wanted()` still says so inside the jar's actor
    /// (`nil`, nothing kept, otherwise).
    func setCookies(_ cookies: [Cookie], now: Date, rules: CookieMergeRules, if wanted: () -> Bool) -> CookieMergeOutcome? {
        guard wanted() else { return nil }
        let outcome = Cookie.merge(cookies, over: jar, now: now, rules: rules)
        jar = outcome.kept
        return outcome
    }

    /// Lays `cookie` over the jar, within ``CookieModule``'s bounds; `false` when it was refused.
    @discardableResult
    public func setCookie(_ cookie: Cookie, now: Date = Date()) -> Bool {
        setCookies([cookie], now: now).kept.contains(cookie) || cookie.isExpired(at: now)
    }

    /// The cookies that go with a request for `url` at `now`.
    public func cookies(for url: URL, now: Date = Date()) -> [Cookie] {
        jar.filter { $0.isSent(to: url, now: now) }
    }

    /// Every cookie held, expired or not.
    public var all: [Cookie] { jar }

    /// Forgets the cookies that would go with a request for `url` (over https, at any time).
    public func deleteCookies(url: URL) {
        var secure = URLComponents(url: url, resolvingAgainstBaseURL: false)
        secure?.scheme = "https"
        let target = secure?.url ?? url
        jar.removeAll { $0.isSent(to: target, now: .distantPast) }
    }

    /// Forgets every cookie.
    public func deleteAll() {
        jar.removeAll()
    }
}
