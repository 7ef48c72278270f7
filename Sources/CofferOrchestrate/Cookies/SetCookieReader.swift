import CofferStorage
import Foundation
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
struct SetCookieReader {
    /// Where the response came from.
    let url: URL
    /// The time `Max-Age` counts from.
    let now: Date

    /// The largest name and value together, in bytes (RFC 6265 §6.1's minimum a user agent keeps).
    static let largestCookie = 4096

    /// Every cookie in `response`'s `Set-Cookie` values, or why it was refused.
    func read(_ response: HTTPURLResponse) -> (cookies: [Cookie], refused: [CookieRefusal]) {
        guard let header = response.value(forHTTPHeaderField: "Set-Cookie") else { return ([], []) }
        var cookies: [Cookie] = [], refused: [CookieRefusal] = []
        for text in Self.split(header) {
            switch cookie(from: text) {
            case .success(let cookie): cookies.append(cookie)
            case .failure(let refusal): refused.append(refusal)
            case nil: break
            }
        }
        return (cookies, refused)
    }

    /// FoundationNetworking joins several `Set-Cookie` headers with commas; an `Expires` date
    /// has one of its own (`Wed, 21 Oct 2026 …`), which does not start a cookie.
    static func split(_ header: String) -> [String] {
        var parts: [String] = [], current = "", attribute = "", expiresComma = false
        for character in header {
            if character == ";" {
                attribute = ""; expiresComma = false
            } else if character == "," {
                let inExpires = attribute.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("expires=")
                if inExpires && !expiresComma {
                    expiresComma = true
                } else {
                    parts.append(current); current = ""; attribute = ""; expiresComma = false
                    continue
                }
            } else {
                attribute.append(character)
            }
            current.append(character)
        }
        parts.append(current)
        return parts.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// One cookie, a refusal, or `nil` for text that is not a cookie at all (RFC 6265 §5.2
    /// ignores it).
    func cookie(from text: String) -> Result<Cookie, CookieRefusal>? {
        let fields = text.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let pair = fields.first, let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        guard !(name + value).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return .failure(.malformed(name: name))
        }
        guard name.utf8.count + value.utf8.count <= Self.largestCookie else { return .failure(.tooLarge(name: name)) }

        var domain: String?, path: String?, expires: Date?, maxAge: Date?, secure = false, httpOnly = false
        for field in fields.dropFirst() {
            let (key, argument) = Self.attribute(field)
            switch key {
            case "expires": expires = Self.date(argument) ?? expires
            case "max-age":
                if let seconds = Int(argument) { maxAge = seconds <= 0 ? .distantPast : now.addingTimeInterval(TimeInterval(min(seconds, 400 * 86_400))) }
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
        let cookieDomain: String
        if let domain {
            let isAddress = host.allSatisfy { $0.isHexDigit || $0 == "." || $0 == ":" } && host.contains(where: { $0 == "." || $0 == ":" })
            if domain == host {
                cookieDomain = isAddress ? host : "." + domain
            } else if !isAddress, domain.contains("."), host.hasSuffix("." + domain) {
                cookieDomain = "." + domain
            } else {
                return .failure(.foreignDomain(name: name, domain: domain))
            }
        } else {
            cookieDomain = host
        }
        return .success(Cookie(name: name, value: value, domain: cookieDomain, path: path ?? defaultPath,
                               expiresAt: maxAge ?? expires, isSecure: secure, isHTTPOnly: httpOnly))
    }

    /// The directory of the response's path (RFC 6265 §5.1.4).
    var defaultPath: String {
        let path = url.path
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    private static func attribute(_ field: String) -> (String, String) {
        guard let equals = field.firstIndex(of: "=") else { return (field.lowercased(), "") }
        return (field[..<equals].trimmingCharacters(in: .whitespaces).lowercased(),
                field[field.index(after: equals)...].trimmingCharacters(in: .whitespaces))
    }

    /// The date formats servers send in `Expires` (RFC 1123, RFC 850 and asctime).
    private static func date(_ text: String) -> Date? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEE, dd-MMM-yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

/// Why a cookie a server sent was not kept. Names and domains only: never a value.
public enum CookieRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// Its `Domain` does not cover the host that sent it (or is a bare top-level name).
    case foreignDomain(name: String, domain: String)
    /// It is `Secure` and came over plain http.
    case secureOverHTTP(name: String)
    /// Its name and value are larger than 4096 bytes.
    case tooLarge(name: String)
    /// Its name or value holds control characters.
    case malformed(name: String)
    /// Keeping it would hold more than ``CookieModule/largestJar`` cookies.
    case tooMany(name: String)

    /// The cookie's name and the reason, safe to log and print (control characters escaped).
    public var description: String {
        func shown(_ text: String) -> String { TerminalText.escaped(String(text.prefix(64))) }
        switch self {
        case let .foreignDomain(name, domain):
            return "cookie '\(shown(name))' refused: its domain '\(shown(domain))' does not cover the host that sent it"
        case .secureOverHTTP(let name): return "cookie '\(shown(name))' refused: a Secure cookie sent over plain http"
        case .tooLarge(let name): return "cookie '\(shown(name))' refused: larger than 4096 bytes"
        case .malformed(let name): return "cookie '\(shown(name))' refused: control characters in its name or value"
        case .tooMany(let name): return "cookie '\(shown(name))' refused: the jar already holds \(CookieModule.largestJar) cookies"
        }
    }
}
