import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP request being built, as Ping's Orchestrate module builds one: a URL, query
/// parameters, headers, cookies and a JSON or form body.
///
/// Better than Ping's: a form body is encoded as `application/x-www-form-urlencoded` requires
/// (a `&`, `=` or `+` inside a value, such as a client secret, no longer splits or changes it),
/// its fields in a fixed order.
public final class Request: @unchecked Sendable {
    // @unchecked Sendable: `request` is read and written only under `lock`.
    private let lock = NSLock()
    private var request: URLRequest

    /// The request as built so far.
    public var urlRequest: URLRequest { lock.withLock { request } }

    /// A request for `urlString` (`https://` until ``url(_:)-(String)`` names one).
    public init(urlString: String = "https://") {
        request = URLRequest(url: URL(string: urlString) ?? URL(string: "https://")!)
    }

    /// Sets the URL, and the default `Content-Type` (JSON) as Ping does. A string that is not a
    /// URL is ignored.
    public func url(_ urlString: String) {
        guard let url = URL(string: urlString) else { return }
        lock.withLock {
            request.url = url
            request.setValue(ContentType.json.rawValue, forHTTPHeaderField: Constants.contentType)
        }
    }

    /// Replaces the whole request.
    public func url(_ urlRequest: URLRequest) {
        lock.withLock { request = urlRequest }
    }

    /// Appends a query parameter.
    public func parameter(name: String, value: String) {
        lock.withLock {
            guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return }
            components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: name, value: value)]
            // `+` is a space to many servers in a query: encode it, as a form would.
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
            if let updated = components.url { request.url = updated }
        }
    }

    /// Adds a header value (a second value of the same header is appended, as `URLRequest` does).
    public func header(name: String, value: String) {
        lock.withLock { request.addValue(value, forHTTPHeaderField: name) }
    }

    /// Adds cookies to the `Cookie` header.
    public func cookies(cookies: [HTTPCookie]) {
        guard !cookies.isEmpty else { return }
        lock.withLock {
            let added = cookies.map { "\($0.name)=\($0.value)" }
            let existing = request.value(forHTTPHeaderField: "Cookie").map { [$0] } ?? []
            request.setValue((existing + added).joined(separator: "; "), forHTTPHeaderField: "Cookie")
        }
    }

    /// A JSON body, sent with POST.
    public func body(body: [String: Any]) {
        let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        lock.withLock {
            request.httpMethod = HTTPMethod.post.rawValue
            request.setValue(ContentType.json.rawValue, forHTTPHeaderField: Constants.contentType)
            request.httpBody = data
        }
    }

    /// A form body (`application/x-www-form-urlencoded`), sent with POST.
    public func form(formData: [String: String]) {
        let body = Data(Self.formEncoded(formData).utf8)
        lock.withLock {
            request.httpMethod = HTTPMethod.post.rawValue
            request.setValue(ContentType.urlEncoded.rawValue, forHTTPHeaderField: Constants.contentType)
            // Stated here, as Apple's URLSession states it: FoundationNetworking hands a
            // URLProtocol the request without it (Ping's tests read it there).
            request.setValue(String(body.count), forHTTPHeaderField: "Content-Length")
            request.httpBody = body
        }
    }

    /// Sets the method.
    public func method(_ method: HTTPMethod) {
        lock.withLock { request.httpMethod = method.rawValue }
    }

    /// The method, if one is set.
    public func getMethod() -> String? {
        lock.withLock { request.httpMethod }
    }

    /// `fields` as a form body: names sorted, each name and value percent-encoded except the
    /// characters the form encoding leaves alone, a space as `+` (WHATWG URL, "application/x-www-form-urlencoded").
    package static func formEncoded(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }.map { "\(formEscaped($0.key))=\(formEscaped($0.value))" }.joined(separator: "&")
    }

    /// One name or value as the form encoding writes it (`+` for a space).
    package static func formEscaped(_ text: String) -> String {
        (text.addingPercentEncoding(withAllowedCharacters: formAllowed) ?? "").replacingOccurrences(of: "%20", with: "+")
    }

    private static let formAllowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789*-._")

    /// Content types Ping's requests use.
    public enum ContentType: String, Sendable {
        /// `text/plain`.
        case plainText = "text/plain"
        /// `application/json`.
        case json = "application/json"
        /// `application/x-www-form-urlencoded`.
        case urlEncoded = "application/x-www-form-urlencoded"
    }

    /// HTTP methods.
    public enum HTTPMethod: String, Sendable {
        /// GET.
        case get = "GET"
        /// PUT.
        case put = "PUT"
        /// POST.
        case post = "POST"
        /// DELETE.
        case delete = "DELETE"
    }

    /// Header names and values Ping's modules use.
    public enum Constants {
        /// `Content-Type`.
        public static let contentType = "Content-Type"
        /// `Accept`.
        public static let accept = "Accept"
        /// `x-requested-with`.
        public static let xRequestedWith = "x-requested-with"
        /// `x-requested-platform`.
        public static let xRequestedPlatform = "x-requested-platform"
        /// `ping-sdk`.
        public static let pingSdk = "ping-sdk"
        /// `ios`, Ping's platform name (kept for servers that expect it).
        public static let ios = "ios"
        /// The `ST` session cookie.
        public static let stCookie = "ST"
        /// The `ST-NO-SS` session cookie.
        public static let stNoSsCookie = "ST-NO-SS"
        /// `Authorization`.
        public static let authorization = "Authorization"
        /// `_links`.
        public static let _links = "_links"
        /// `continue`.
        public static let _continue = "continue"
        /// `href`.
        public static let href = "href"
        /// `idToken`.
        public static let idToken = "idToken"
        /// `accessToken`.
        public static let accessToken = "accessToken"
        /// `Accept-Language`.
        public static let acceptLanguage = "Accept-Language"
    }
}
