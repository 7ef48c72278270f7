import CofferMFACommons
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends ``Request``s with a `URLSession`, as Ping's Orchestrate module does (FoundationNetworking
/// on Linux), so a `URLProtocol` registered for the shared session sees every request.
///
/// Better than Ping's:
/// - Its log lines name the method, the URL without its query, the status and the size of the
///   body, never a header's or a body's content, so no token, code, verifier or client secret
///   reaches a log.
/// - An exchange has a deadline as a whole (``timeoutIntervalForRequest``), not only between
///   bytes, and an answer is read only up to ``responseSizeLimit``: a server answering a byte at
///   a time, or with gigabytes, fails the call instead of holding it or filling the memory.
///   On its own session (the default) the transfer is cut off at the limit; on a session you
///   give, the answer is checked once it has arrived.
/// - Its own session is ephemeral: no cookie, cache or credential is kept on disk or shared
///   with other clients.
open class HttpClient: NSObject, @unchecked Sendable {
    // @unchecked Sendable: the session, once made, is never replaced (URLSession is
    // thread-safe); it and the limits are read and written only under `lock`.
    private let makeSessionOnFirstUse: @Sendable () -> URLSession
    private let lock = NSLock()
    private var madeSession: URLSession?
    private var madeCookieSession: URLSession?
    private var timeout: TimeInterval = 60
    private var sizeLimit = 4 << 20
    private var cookieModule: CookieModule?

    /// The session requests are sent on, made (or looked up) when the first one is sent. The
    /// caller's closure runs outside the lock; if two first requests race, the first session
    /// kept wins.
    var session: URLSession {
        if let made = lock.withLock({ madeSession }) { return made }
        let session = ProtocolOrder.applesOrder(for: makeSessionOnFirstUse())
        return lock.withLock {
            if let madeSession { return madeSession }
            madeSession = session
            return session
        }
    }

    /// The session requests carrying cookies are sent on: the client's own, or, when a session
    /// of the caller's would follow a redirect (and take the `Cookie` header to wherever it
    /// points), a copy of its configuration that follows none and handles no cookie itself.
    var cookieSession: URLSession {
        let session = self.session
        if session.delegate is BoundedTransfers { return session }
        return lock.withLock {
            if let madeCookieSession { return madeCookieSession }
            let configuration = session.configuration
            configuration.httpCookieStorage = nil
            configuration.httpShouldSetCookies = false
            configuration.httpCookieAcceptPolicy = .never
            let copy = URLSession(configuration: configuration, delegate: BoundedTransfers(), delegateQueue: nil)
            madeCookieSession = copy
            return copy
        }
    }

    /// How long a whole exchange may take, in seconds (60 by default).
    public var timeoutIntervalForRequest: TimeInterval {
        get { lock.withLock { timeout } }
        set { lock.withLock { timeout = newValue } }
    }

    /// The cookies sent with every ``Request`` and kept from every answer (none by default: the
    /// client's own session keeps no cookie either). See ``CookieModule``.
    public var cookies: CookieModule? {
        get { lock.withLock { cookieModule } }
        set { lock.withLock { cookieModule = newValue } }
    }

    /// The largest answer read, in bytes (4 MiB by default).
    public var responseSizeLimit: Int {
        get { lock.withLock { sizeLimit } }
        set { lock.withLock { sizeLimit = newValue } }
    }

    /// A client on `session`; by default one of its own, ephemeral, that does not follow
    /// redirects (a redirect from an authorization server is an answer to read, not a page to
    /// load) and cuts off an answer past ``responseSizeLimit``.
    ///
    /// `session` is evaluated when the first request is sent, not here. That is what lets
    /// `HttpClient(session: .shared)` see a `URLProtocol` registered afterwards on Linux, as it
    /// would on Apple's platforms: FoundationNetworking fixes the shared session's protocols
    /// when the session is first made, and Ping's own tests register theirs after building
    /// the client. A protocol registered after something else in the process has made
    /// `URLSession.shared` is still not seen; give such a client a session whose
    /// configuration's `protocolClasses` names it. A session without a delegate consults the
    /// protocols registered with `URLProtocol.registerClass` before FoundationNetworking's own,
    /// as Apple's platforms do (``HttpClient`` sends on a copy of it when the order differs).
    public init(session: @autoclosure @escaping @Sendable () -> URLSession = HttpClient.makeSession()) {
        self.makeSessionOnFirstUse = session
    }

    /// A session of the kind ``HttpClient`` makes for itself: ephemeral, following no redirect,
    /// each answer cut off past the size limit of the client that sends on it.
    public static func makeSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        // Cookies go only where a CookieModule sends them.
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return URLSession(configuration: configuration, delegate: BoundedTransfers(), delegateQueue: nil)
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
        try await sendRequest(request: request, on: session)
    }

    /// Sends `request` on `session` and returns the body and response, whatever the status.
    private func sendRequest(request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        var request = request
        let (deadline, limit) = lock.withLock { (timeout, sizeLimit) }
        request.timeoutInterval = deadline
        logRequest(request: request)
        let (data, response): (Data, URLResponse)
        do {
            if let bounded = session.delegate as? BoundedTransfers {
                (data, response) = try await bounded.send(request, on: session, limit: limit, deadline: deadline)
            } else {
                (data, response) = try await Self.send(request, on: session, deadline: deadline)
                guard data.count <= limit else { throw HttpClientError.responseTooLarge(limit: limit) }
            }
        } catch let error as URLError where error.code == .timedOut {
            // The session's own timeout (between bytes) and the whole exchange's are one limit.
            throw HttpClientError.deadlineExceeded(seconds: Int(deadline))
        }
        logResponse(responseData: data, response: response)
        return (data, response)
    }

    /// Sends `request` and returns the body and response, whatever the status.
    ///
    /// With ``cookies``, the request carries the cookies that belong to its URL, follows no
    /// redirect (the header would go wherever it points), and the answer's cookies are kept
    /// before it is returned. A storage that fails to keep them is logged as an error and the
    /// answer is still returned: it can hold what cannot be asked for twice, such as a token
    /// from a rotating refresh.
    public func sendRequest(request: Request) async throws -> (Data, URLResponse) {
        guard let cookies else { return try await sendRequest(request: request.urlRequest) }
        try await cookies.prepare(request)
        let signOffs = cookies.signOffCount
        let (data, response) = try await sendRequest(request: request.urlRequest, on: cookieSession)
        do {
            _ = try await cookies.receive(response, sentAfter: signOffs)
        } catch {
            LogManager.logger.e("The answer's cookies could not be kept: \(error)", error: error)
        }
        return (data, response)
    }

    /// Sends `request` on a session of the caller's, cancelling it once `seconds` are up
    /// (``HttpClientError/deadlineExceeded(seconds:)``). A completion handler and a timer of our
    /// own, not `data(for:)` raced in a task group: cancelling FoundationNetworking's async
    /// `data(for:)` can leave it waiting for ever.
    private static func send(_ request: URLRequest, on session: URLSession, deadline seconds: TimeInterval) async throws -> (Data, URLResponse) {
        let outcome = SendOutcome()
        return try await withCheckedThrowingContinuation { continuation in
            outcome.set(continuation)
            let task = session.dataTask(with: request) { data, response, error in
                if let error {
                    outcome.finish(.failure(error))
                } else if let data, let response {
                    outcome.finish(.success((data, response)))
                } else {
                    outcome.finish(.failure(URLError(.badServerResponse)))
                }
            }
            task.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                if outcome.finish(.failure(HttpClientError.deadlineExceeded(seconds: Int(seconds)))) { task.cancel() }
            }
        }
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

/// The one answer of a ``HttpClient`` exchange on a session of the caller's: whichever of the
/// transfer and the deadline comes first resumes the caller; the other finds it done.
private final class SendOutcome: Sendable {
    private let state = Mutex<CheckedContinuation<(Data, URLResponse), any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        state.withLock { $0 = continuation }
    }

    /// Resumes the caller with `result`; `false` when it was resumed already.
    @discardableResult
    func finish(_ result: Result<(Data, URLResponse), any Error>) -> Bool {
        guard let continuation = state.withLock({ $0.take() }) else { return false }
        continuation.resume(with: result)
        return true
    }
}
