import CofferStorage
import Foundation

extension Cookie {
    /// Whether this cookie goes with a request for `url` at `now` (RFC 6265 §5.4): its domain
    /// covers the host (exactly, for a cookie set without `Domain`), its path covers the
    /// request's, it is not `Secure` on plain http, and it has not expired.
    public func isSent(to url: URL, now: Date = Date()) -> Bool {
        guard let host = url.host?.lowercased(), !isExpired(at: now) else { return false }
        if isSecure && url.scheme?.lowercased() != "https" { return false }
        let domain = self.domain.lowercased()
        let domainMatches = domain.hasPrefix(".") ? (host == domain.dropFirst() || host.hasSuffix(domain)) : host == domain
        guard domainMatches else { return false }
        let requestPath = url.path.isEmpty ? "/" : url.path
        if requestPath == path { return true }
        guard requestPath.hasPrefix(path) else { return false }
        return path.hasSuffix("/") || requestPath.dropFirst(path.count).hasPrefix("/")
    }

    /// The `Cookie` header for `cookies`: longer paths first, as RFC 6265 §5.4 orders them.
    static func header(for cookies: [Cookie]) -> String {
        cookies.sorted { $0.path.count > $1.path.count }.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }
}
