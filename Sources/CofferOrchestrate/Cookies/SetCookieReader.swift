import CofferStorage
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads a response's `Set-Cookie` values as a user agent must (RFC 6265 §5.2 and §5.3), and
/// refuses what a server may not set.
///
/// FoundationNetworking's `HTTPCookie` parser takes a `Domain` that does not cover the host
/// (`evil.example` setting a cookie for `bank.example`), ignores `Max-Age` (so `Max-Age=0`, the
/// way servers delete a cookie, keeps it) and takes `Secure` cookies sent over plain http: this
/// reader is the one Coffer uses instead.
///
/// Coffer has no public-suffix list, so a `Domain` wider than the host that sent it (`example.com`
/// from `am.example.com`, but also `co.uk` from `evil.co.uk`) is narrowed to that host: the
/// cookie goes back only to the host that set it, never to every site under a shared suffix.
struct SetCookieReader {
    /// Where the response came from.
    let url: URL
    /// The time `Max-Age` counts from.
    let now: Date

    /// The largest name and value together, in bytes (RFC 6265 §6.1's minimum a user agent keeps).
    static let largestCookie = 4096
    /// The most cookies read from one response; the rest are ignored.
    static let mostPerResponse = 256
    /// The longest a cookie is kept: 400 days, as RFC 6265bis caps `Max-Age` and `Expires`.
    static let longestLife: TimeInterval = 400 * 86_400

    /// Every cookie in `response`'s `Set-Cookie` values, or why it was refused.
    func read(_ response: HTTPURLResponse) -> (cookies: [Cookie], refused: [CookieRefusal]) {
        guard let header = response.value(forHTTPHeaderField: "Set-Cookie") else { return ([], []) }
        var cookies: [Cookie] = [], refused: [CookieRefusal] = []
        for text in Self.split(header).prefix(Self.mostPerResponse) {
            switch cookie(from: text) {
            case .success(let cookie): cookies.append(cookie)
            case .failure(let refusal): refused.append(refusal)
            case nil: break
            }
        }
        return (cookies, refused)
    }

    /// FoundationNetworking joins several `Set-Cookie` headers with commas. A comma starts a new
    /// cookie only where a `name=` follows it, and not inside an `Expires` date after its day's
    /// name (`Wed, 21 Oct 2026 …`); a comma inside a value (`sid=a,b; Secure`) stays in it.
    static func split(_ header: String) -> [String] {
        let characters = Array(header)
        var parts: [String] = [], current = "", attribute = ""
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == ";" {
                attribute = ""
            } else if character == "," {
                let text = attribute.trimmingCharacters(in: .whitespaces).lowercased()
                let inDayName = text.hasPrefix("expires=") && text.dropFirst("expires=".count).allSatisfy(\.isLetter)
                if !inDayName && startsCookie(characters, after: index) {
                    parts.append(current)
                    current = ""; attribute = ""; index += 1
                    continue
                }
                attribute.append(character)
            } else {
                attribute.append(character)
            }
            current.append(character)
            index += 1
        }
        parts.append(current)
        return parts.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Whether a cookie's `name=` follows the comma at `comma`.
    private static func startsCookie(_ characters: [Character], after comma: Int) -> Bool {
        var index = comma + 1
        while index < characters.count, characters[index] == " " || characters[index] == "\t" { index += 1 }
        let start = index
        while index < characters.count, !"=;, \t".contains(characters[index]) { index += 1 }
        return index > start && index < characters.count && characters[index] == "="
    }

    /// One cookie, a refusal, or `nil` for text that is not a cookie at all (RFC 6265 §5.2
    /// ignores it).
    func cookie(from text: String) -> Result<Cookie, CookieRefusal>? {
        let fields = text.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let pair = fields.first, let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        guard !Self.hasControls(name + value) else { return .failure(.malformed(name: name)) }
        guard name.utf8.count + value.utf8.count <= Self.largestCookie else { return .failure(.tooLarge(name: name)) }

        var domain: String?, path: String?, expires: Date?, maxAge: Date?, secure = false, httpOnly = false
        for field in fields.dropFirst() {
            let (key, argument) = Self.attribute(field)
            guard !Self.hasControls(argument) else { return .failure(.malformed(name: name)) }
            switch key {
            case "expires": expires = Self.date(argument).map { min($0, now.addingTimeInterval(Self.longestLife)) } ?? expires
            case "max-age": maxAge = Self.maxAge(argument).map { $0 <= 0 ? .distantPast : now.addingTimeInterval(min(TimeInterval($0), Self.longestLife)) } ?? maxAge
            case "domain":
                let trimmed = argument.hasPrefix(".") ? String(argument.dropFirst()) : argument
                if !trimmed.isEmpty { domain = trimmed.lowercased() }
            case "path": path = argument.hasPrefix("/") ? argument : nil
            case "secure": secure = true
            case "httponly": httpOnly = true
            default: break
            }
        }
        guard let host = url.host?.lowercased(), !host.isEmpty else { return .failure(.foreignDomain(name: name, domain: domain ?? "")) }
        if secure && url.scheme?.lowercased() != "https" { return .failure(.secureOverHTTP(name: name)) }
        if let domain, domain != host, !(!Self.isAddress(host) && host.hasSuffix("." + domain)) {
            return .failure(.foreignDomain(name: name, domain: domain))
        }
        return .success(Cookie(name: name, value: value, domain: host, path: path ?? defaultPath,
                               expiresAt: maxAge ?? expires, isSecure: secure, isHTTPOnly: httpOnly))
    }

    /// The directory of the response's path (RFC 6265 §5.1.4).
    var defaultPath: String {
        let path = Self.path(of: url)
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// `url`'s path as sent, a trailing `/` kept (Foundation's `path` drops it); `/` when empty.
    static func path(of url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        return path.hasPrefix("/") ? path : "/"
    }

    /// Whether `host` is an IPv4 or IPv6 address, which no `Domain` but itself covers.
    static func isAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }

    /// Whether `text` holds a character that must not reach a header, a log or a terminal.
    static func hasControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { TerminalText.isControl($0) }
    }

    private static func attribute(_ field: String) -> (String, String) {
        guard let equals = field.firstIndex(of: "=") else { return (field.lowercased(), "") }
        return (field[..<equals].trimmingCharacters(in: .whitespaces).lowercased(),
                field[field.index(after: equals)...].trimmingCharacters(in: .whitespaces))
    }

    /// `Max-Age`'s seconds (RFC 6265 §5.2.2: an optional `-`, then digits; a number too large to
    /// hold keeps its sign), or `nil` when the attribute is to be ignored.
    private static func maxAge(_ text: String) -> Int? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text) ?? (text.hasPrefix("-") ? Int.min : Int.max)
    }

    /// The date formats servers send in `Expires` (RFC 1123, RFC 850 and asctime), made once.
    private static let formatters: Mutex<[DateFormatter]> = Mutex(
        ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEE, dd-MMM-yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"].map { format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        })

    private static func date(_ text: String) -> Date? {
        guard text.count <= 64 else { return nil }
        return formatters.withLock { formatters in formatters.lazy.compactMap { $0.date(from: text) }.first }
    }
}

/// Why a cookie a server sent was not kept. Names and domains only: never a value.
public enum CookieRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// Its `Domain` does not cover the host that sent it.
    case foreignDomain(name: String, domain: String)
    /// It is `Secure` and came over plain http.
    case secureOverHTTP(name: String)
    /// Its name and value are larger than 4096 bytes.
    case tooLarge(name: String)
    /// Its name, value or an attribute holds control characters (terminal escapes, bidirectional
    /// overrides).
    case malformed(name: String)
    /// It came over plain http and would replace or delete a `Secure` cookie of its name.
    case secureShadowed(name: String)
    /// Keeping it would hold more than ``CookieModule/largestJar`` cookies of its host, or
    /// more than ``CookieModule/largestJar`` × 16 in all.
    case tooMany(name: String)

    /// The cookie's name and the reason, safe to log and print (control characters escaped).
    public var description: String {
        func shown(_ text: String) -> String { TerminalText.escaped(String(text.prefix(64))) }
        switch self {
        case let .foreignDomain(name, domain):
            return "cookie '\(shown(name))' refused: its domain '\(shown(domain))' does not cover the host that sent it"
        case .secureOverHTTP(let name): return "cookie '\(shown(name))' refused: a Secure cookie sent over plain http"
        case .tooLarge(let name): return "cookie '\(shown(name))' refused: larger than 4096 bytes"
        case .malformed(let name): return "cookie '\(shown(name))' refused: control characters in it"
        case .secureShadowed(let name): return "cookie '\(shown(name))' refused: over plain http it cannot replace a Secure cookie"
        case .tooMany(let name): return "cookie '\(shown(name))' refused: the jar already holds as many cookies of its host as it keeps"
        }
    }
}
