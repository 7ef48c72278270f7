import CofferMFACommons
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends ``Request``s with a `URLSession`, as Ping's Orchestrate module does: FoundationNetworking
/// on Linux, so a `URLProtocol` registered for the shared session sees every request.
///
/// Better than Ping's: its log lines name the method, the URL without its query, the status and
/// the size of the body, never a header's or a body's content, so no token, code, verifier or
/// client secret reaches a log.
open class HttpClient: NSObject, @unchecked Sendable {
    // @unchecked Sendable: `session` is immutable (URLSession is thread-safe) and
    // `timeoutIntervalForRequest` is read and written only under `lock`.
    let session: URLSession
    private let lock = NSLock()
    private var timeout: TimeInterval = 60

    /// How long a request may take, in seconds (60 by default).
    public var timeoutIntervalForRequest: TimeInterval {
        get { lock.withLock { timeout } }
        set { lock.withLock { timeout = newValue } }
    }

    /// A client on `session`; by default one of its own that does not follow redirects (a
    /// redirect from an authorization server is an answer to read, not a page to load).
    public init(session: URLSession = URLSession(configuration: .default, delegate: RedirectPreventer(), delegateQueue: nil)) {
        self.session = session
    }

    /// Logs the request's method and URL (without its query) at debug level.
    public func logRequest(request: URLRequest?) {
        guard let request else { return }
        LogManager.logger.d("⬆ \(request.httpMethod ?? "GET") \(Self.shown(request.url)) (\(request.httpBody?.count ?? 0) bytes)")
    }

    func logResponse(responseData: Data?, response: URLResponse?) {
        let status = (response as? HTTPURLResponse)?.statusCode.description ?? "no status"
        LogManager.logger.d("⬇ \(status) \(Self.shown(response?.url)) (\(responseData?.count ?? 0) bytes)")
    }

    /// Sends `request` and returns the body and response, whatever the status.
    func sendRequest(request: URLRequest) async throws -> (Data, URLResponse) {
        var request = request
        request.timeoutInterval = timeoutIntervalForRequest
        logRequest(request: request)
        let (data, response) = try await session.data(for: request)
        logResponse(responseData: data, response: response)
        return (data, response)
    }

    /// Sends `request` and returns the body and response, whatever the status.
    public func sendRequest(request: Request) async throws -> (Data, URLResponse) {
        try await sendRequest(request: request.urlRequest)
    }

    /// `url` without its query and fragment: what a log line may show.
    static func shown(_ url: URL?) -> String {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "-" }
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return components.string ?? "-"
    }
}

/// A session delegate that refuses every redirect, so the response that asked for it is returned.
public final class RedirectPreventer: NSObject, URLSessionTaskDelegate, Sendable {
    /// Refuses the redirect: the redirecting response is what the caller gets.
    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                           newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
