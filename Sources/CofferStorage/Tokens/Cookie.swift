import Foundation

/// An HTTP cookie as a session needs to keep it.
///
/// A cookie is identified by its name, domain and path: a new cookie with the same three replaces
/// the old one. `description` and `dump` never show the value.
public struct Cookie: Codable, Sendable, Hashable {
    /// The cookie's name, for example `ST`.
    public var name: String
    /// The cookie's value (often a session secret).
    public var value: String
    /// The domain the cookie belongs to.
    public var domain: String
    /// The path the cookie applies to.
    public var path: String
    /// When the cookie expires; `nil` for a session cookie that lives until it is replaced.
    public var expiresAt: Date?
    /// Send only over HTTPS.
    public var isSecure: Bool
    /// Hidden from scripts.
    public var isHTTPOnly: Bool

    /// Creates a cookie.
    public init(
        name: String, value: String, domain: String, path: String = "/", expiresAt: Date? = nil,
        isSecure: Bool = true, isHTTPOnly: Bool = true
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.path = path
        self.expiresAt = expiresAt
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
    }

    /// Whether the cookie has expired at `now`.
    public func isExpired(at now: Date = Date()) -> Bool {
        expiresAt.map { $0 <= now } ?? false
    }

    /// Two cookies with the same identity replace each other.
    var identity: [String] { [name, domain.lowercased(), path] }
}

extension Cookie: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The cookie's name, domain, path and expiry; the value shows only as `<redacted>` and control
    /// characters as `\u{…}`, so a cookie can be logged and printed safely.
    public var description: String {
        let (name, domain, path) = (TerminalText.escaped(name), TerminalText.escaped(domain), TerminalText.escaped(path))
        return "Cookie(\(name), domain: \(domain), path: \(path), expiresAt: \(expiresAt.map { "\($0)" } ?? "session"), value: <redacted>)"
    }

    /// The same as ``description``: the value stays redacted in the debugger and in `debugPrint`.
    public var debugDescription: String { description }

    /// A mirror without the value (`<redacted>`), so `dump(_:)` and the debugger cannot reveal it.
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "domain": domain, "path": path, "value": "<redacted>"])
    }
}
