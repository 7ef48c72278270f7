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
        try await merge(cookies, now: now, rules: CookieMergeRules()).kept
    }

    /// ``merge(_:now:)`` by `rules` (how many cookies a domain and the jar may hold, and whether
    /// the cookies came over plain http), in the same locked step as the write. What the rules
    /// refuse is not kept and is returned.
    public func merge(_ cookies: [Cookie], now: Date = Date(), rules: CookieMergeRules) async throws -> CookieMergeOutcome {
        try await merge(cookies, now: now, rules: rules, if: { true }) ?? CookieMergeOutcome(kept: [], overLimit: [], shadowingSecure: [])
    }

    /// ``merge(_:now:rules:)`` only if `wanted()` still says so once the locked step has begun
    /// (`nil`, nothing written, otherwise): how a sign-off that ran meanwhile wins over cookies
    /// that were on their way.
    public func merge(_ cookies: [Cookie], now: Date = Date(), rules: CookieMergeRules,
                      if wanted: @escaping @Sendable () -> Bool) async throws -> CookieMergeOutcome? {
        let (storage, persist) = (storage, persist)
        return try await exclusively {
            guard wanted() else { return nil }
            let outcome = Cookie.merge(cookies.filter { persist.contains($0.name) }, over: try await storage.get() ?? [], now: now, rules: rules)
            try await storage.save(item: outcome.kept)
            return outcome
        }
    }

    /// The stored cookies that have not expired at `now`, read from the storage itself (inside
    /// its exclusive section, past any memory copy), so another process's changes are seen.
    public func cookies(now: Date = Date()) async throws -> [Cookie] {
        let (storage, persist) = (storage, persist)
        return try await exclusively {
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

    /// ``merge(_:over:now:)`` one new cookie at a time, by `rules`: a cookie that would take its
    /// domain past ``CookieMergeRules/perDomain`` or the whole past ``CookieMergeRules/total``
    /// is refused (replacing one counts nothing), and so is one from plain http that would
    /// replace or delete a `Secure` cookie of its name (RFC 6265bis §5.7).
    public static func merge(_ new: [Cookie], over stored: [Cookie], now: Date = Date(), rules: CookieMergeRules) -> CookieMergeOutcome {
        var kept = merge([], over: stored, now: now)
        var overLimit: [Cookie] = [], shadowingSecure: [Cookie] = []
        for cookie in new {
            if !rules.fromSecureOrigin, kept.contains(where: { $0.isSecure && $0.name == cookie.name && $0.sharesSite(with: cookie) }) {
                shadowingSecure.append(cookie)
                continue
            }
            let next = merge([cookie], over: kept, now: now)
            let site = cookie.site
            let ofSite = next.filter { $0.site == site }.count
            if (next.count > kept.count) && (ofSite > rules.perDomain || next.count > rules.total) {
                overLimit.append(cookie)
            } else {
                kept = next
            }
        }
        return CookieMergeOutcome(kept: kept, overLimit: overLimit, shadowingSecure: shadowingSecure)
    }

    /// The domain without its leading dot: what the per-domain limit counts by.
    var site: String { (domain.hasPrefix(".") ? String(domain.dropFirst()) : domain).lowercased() }

    /// Whether either cookie's domain covers the other's.
    func sharesSite(with other: Cookie) -> Bool {
        site == other.site || site.hasSuffix("." + other.site) || other.site.hasSuffix("." + site)
    }
}

/// How a merge of cookies is bounded (``CookieStore/merge(_:now:rules:)``).
public struct CookieMergeRules: Sendable, Equatable {
    /// The most cookies one domain may have kept.
    public var perDomain: Int
    /// The most cookies kept in all.
    public var total: Int
    /// Whether the new cookies came over https. From plain http, none may replace or delete a
    /// `Secure` cookie of its name.
    public var fromSecureOrigin: Bool

    /// Rules with these bounds (none by default).
    public init(perDomain: Int = .max, total: Int = .max, fromSecureOrigin: Bool = true) {
        self.perDomain = perDomain
        self.total = total
        self.fromSecureOrigin = fromSecureOrigin
    }
}

/// What a bounded merge kept and refused.
public struct CookieMergeOutcome: Sendable, Equatable {
    /// The cookies now kept.
    public var kept: [Cookie]
    /// New cookies refused by ``CookieMergeRules/perDomain`` or ``CookieMergeRules/total``.
    public var overLimit: [Cookie]
    /// New cookies from plain http refused because a `Secure` cookie of their name is kept.
    public var shadowingSecure: [Cookie]

    /// An outcome: what was kept and what was refused.
    public init(kept: [Cookie], overLimit: [Cookie] = [], shadowingSecure: [Cookie] = []) {
        self.kept = kept
        self.overLimit = overLimit
        self.shadowingSecure = shadowingSecure
    }
}
