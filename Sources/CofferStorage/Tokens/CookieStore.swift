import Foundation

/// Keeps the cookies a session needs across runs, in any ``Storage``.
///
/// Only cookies whose names are in ``persist`` are kept. ``merge(_:now:)`` lays new cookies over
/// the stored ones (same name, domain and path replaces), drops expired ones and saves, in one
/// locked step, so concurrent merges never lose each other's cookies: in one process, and across
/// processes when the storage offers an ``ExclusiveSection`` (a ``StorageDelegate`` over files,
/// the keyring or PostgreSQL does).
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
        try await merge(cookies, now: now, limit: .max).kept
    }

    /// ``merge(_:now:)``, keeping at most `limit` cookies (or as many as are stored, if more):
    /// a new cookie that would go past it is not kept and is returned in `refused`. The count
    /// is checked in the same locked step as the write.
    public func merge(_ cookies: [Cookie], now: Date = Date(), limit: Int) async throws -> (kept: [Cookie], refused: [Cookie]) {
        let (storage, persist) = (storage, persist)
        return try await exclusively {
            let stored = try await storage.get() ?? []
            var merged = Cookie.merge([], over: stored, now: now)
            var refused: [Cookie] = []
            for cookie in cookies where persist.contains(cookie.name) {
                let next = Cookie.merge([cookie], over: merged, now: now)
                if next.count > max(limit, merged.count) { refused.append(cookie) } else { merged = next }
            }
            try await storage.save(item: merged)
            return (merged, refused)
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
        let storage = storage
        try await exclusively { try await storage.delete() }
    }

    /// Runs `body` alone: under this store's lock, and in the storage's exclusive section when
    /// it offers one.
    private func exclusively<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws -> R {
        try await lock.withLock {
            if let section = storage as? any ExclusiveSection { return try await section.withExclusiveSection(body) }
            return try await body()
        }
    }
}

extension Cookie {
    /// `new` laid over `stored`: a cookie with the same name, domain and path replaces the stored
    /// one in its place, others are added in order, and every cookie expired at `now` is dropped
    /// (so an expired new cookie removes the stored one, the way servers delete cookies).
    public static func merge(_ new: [Cookie], over stored: [Cookie], now: Date = Date()) -> [Cookie] {
        var byIdentity: [[String]: Cookie] = [:]
        var order: [[String]] = []
        for cookie in stored + new where byIdentity.updateValue(cookie, forKey: cookie.identity) == nil {
            order.append(cookie.identity)
        }
        return order.compactMap { byIdentity[$0] }.filter { !$0.isExpired(at: now) }
    }
}
