import CofferStorage
import Foundation

/// The cookies a ``CookieModule`` keeps for this process only: every cookie a server sets whose
/// name is not in ``CookieConfig/persist``. Ping's name; gone when the process ends.
public actor InMemoryCookieStorage {
    private var jar: [Cookie] = []

    /// An empty jar.
    public init() {}

    /// Lays `cookie` over the jar (the same name, domain and path replaces; an expired one
    /// removes). Returns `false`, keeping nothing, when it would be one cookie more than
    /// `limit`.
    @discardableResult
    public func setCookie(_ cookie: Cookie, now: Date = Date(), limit: Int = CookieModule.largestJar) -> Bool {
        let merged = Cookie.merge([cookie], over: jar, now: now)
        guard merged.count <= max(limit, jar.count) else { return false }
        jar = merged
        return true
    }

    /// The cookies that go with a request for `url` at `now`.
    public func cookies(for url: URL, now: Date = Date()) -> [Cookie] {
        jar.filter { $0.isSent(to: url, now: now) }
    }

    /// Every cookie held, expired or not.
    public var all: [Cookie] { jar }

    /// Forgets the cookies that would go with a request for `url`.
    public func deleteCookies(url: URL) {
        jar.removeAll { $0.isSent(to: url, now: .distantPast) }
    }

    /// Forgets every cookie.
    public func deleteAll() {
        jar.removeAll()
    }
}
