import CofferStorage
import Foundation

/// Which cookies go with a request, and how they are written in its `Cookie` header.
extension Cookie {
    /// Whether this cookie goes with a request for `url` at `now` (RFC 6265 §5.4): its domain
    /// covers the host (exactly, for a cookie set without a wider `Domain`), its path covers the
    /// request's, it is not `Secure` on plain http, and it has not expired.
    public func isSent(to url: URL, now: Date = Date()) -> Bool {
        guard let host = url.host?.lowercased(), !isExpired(at: now) else { return false }
        if isSecure && url.scheme?.lowercased() != "https" { return false }
        let domain = self.domain.lowercased()
        let domainMatches = domain.hasPrefix(".") ? (host == domain.dropFirst() || host.hasSuffix(domain)) : host == domain
        guard domainMatches else { return false }
        let requestPath = SetCookieReader.path(of: url)
        if requestPath == path { return true }
        guard requestPath.hasPrefix(path) else { return false }
        return path.hasSuffix("/") || requestPath.dropFirst(path.count).hasPrefix("/")
    }

    /// Whether the cookie can be written in a header as it is: a name without `=`, `;`, `,`,
    /// spaces or control characters, and a value without `;` or control characters. A cookie
    /// stored through the public API that is not is never sent.
    var isWritable: Bool {
        !name.isEmpty && !name.contains(where: { "=;, \t".contains($0) }) && !value.contains(";")
            && !SetCookieReader.hasControls(name + value)
    }

    /// The `Cookie` header for `cookies`: longer paths first, as RFC 6265 §5.4 orders them.
    static func header(for cookies: [Cookie]) -> String {
        cookies.filter(\.isWritable).sorted { $0.path.count > $1.path.count }.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }
}
