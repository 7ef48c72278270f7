import Foundation

/// Keeps the cookies a session needs across runs, in any ``Storage``.
///
/// Only cookies whose names are in ``persist`` are kept. ``merge(_:now:)`` lays new cookies over
/// the stored ones (same name, domain and path replaces), drops expired ones and saves, in one
/// locked step, so concurrent merges on one store never lose each other's cookies.
///
/// ```swift
/// let cookies = CookieStore(persist: ["ST", "ST-NO-SS"],
///                           storage: EncryptedFileStorage<[Cookie]>(fileName: "com.example.cookies"))
/// try await cookies.merge(responseCookies)
/// let current = try await cookies.cookies()
/// ```
public final class CookieStore: Sendable {
    /// The names of the cookies to keep; others are ignored.
    public let persist: Set<String>
    /// Where the cookies are kept.
    public let storage: any Storage<[Cookie]>

    private let lock = AsyncLock()

    /// Creates a cookie store.
    ///
    /// - Parameters:
    ///   - persist: The names of the cookies to keep, for example `["ST", "ST-NO-SS"]`.
    ///   - storage: Where to keep them. Use an encrypted backend: session cookies are credentials.
    public init(persist: [String], storage: any Storage<[Cookie]>) {
        self.persist = Set(persist)
        self.storage = storage
    }

    /// Merges `cookies` into the stored ones and saves the result.
    ///
    /// Cookies not named in ``persist`` are ignored; a new cookie replaces a stored one with the
    /// same name, domain and path; an expired new cookie removes the stored one (the way servers
    /// delete cookies); expired stored cookies are dropped.
    ///
    /// - Returns: The cookies now stored.
    @discardableResult
    public func merge(_ cookies: [Cookie], now: Date = Date()) async throws -> [Cookie] {
        try await lock.withLock {
            var byIdentity: [[String]: Cookie] = [:]
            var order: [[String]] = []
            func put(_ cookie: Cookie) {
                if byIdentity.updateValue(cookie, forKey: cookie.identity) == nil { order.append(cookie.identity) }
            }
            for cookie in try await storage.get() ?? [] { put(cookie) }
            for cookie in cookies where persist.contains(cookie.name) { put(cookie) }
            let merged = order.compactMap { byIdentity[$0] }.filter { !$0.isExpired(at: now) }
            try await storage.save(item: merged)
            return merged
        }
    }

    /// The stored cookies that have not expired at `now`.
    public func cookies(now: Date = Date()) async throws -> [Cookie] {
        try await lock.withLock {
            (try await storage.get() ?? []).filter { !$0.isExpired(at: now) && persist.contains($0.name) }
        }
    }

    /// Removes every stored cookie.
    public func clear() async throws {
        try await lock.withLock { try await storage.delete() }
    }
}
