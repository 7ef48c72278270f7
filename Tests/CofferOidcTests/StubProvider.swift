import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A fault injector, not a provider: it answers the few requests these tests make, so that a
/// refusal, a slow answer or a count of calls can be set up. The flows themselves are tested
/// against a real OpenID Provider (issue 32, point 6).
class StubProvider: URLProtocol, @unchecked Sendable {
    // @unchecked Sendable: the shared state is `state`, a Mutex; URLProtocol's own fields are
    // used by URLSession on one thread per request.
    struct State {
        var calls: [String: Int] = [:]
        var forms: [[String: String]] = []
        var refusesRefresh = false
        var rotates = true
        var delay: Duration = .zero
        var issued = 0
        /// Each form request's `Content-Length` header, as the protocol saw it.
        var lengths: [Int?] = []
        /// A refresh's answer other than a token: its status and body.
        var refreshStatus: Int?
        var refreshBody = #"{"error": "temporarily_unavailable"}"#
        /// Another discovery document, or an error status for it.
        var discovery: String?
        var discoveryStatus = 200
        /// Another userinfo body.
        var userinfoBody: String?
    }

    static let state = Mutex(State())
    static let base = "https://op.coffer.test"

    static func reset(_ change: (inout State) -> Void = { _ in }) {
        state.withLock { state in
            state = State()
            change(&state)
        }
    }

    static func calls(_ path: String) -> Int { state.withLock { $0.calls[path] ?? 0 } }

    override class func canInit(with request: URLRequest) -> Bool { request.url?.host == "op.coffer.test" }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let path = request.url?.path ?? ""
        let form = Self.form(of: request)
        let (delay, answer): (Duration, (Int, String)) = Self.state.withLock { state in
            state.calls[path, default: 0] += 1
            if !form.isEmpty {
                state.forms.append(form)
                state.lengths.append(request.value(forHTTPHeaderField: "Content-Length").flatMap { Int($0) })
            }
            return (state.delay, Self.answer(path: path, form: form, state: &state))
        }
        if delay > .zero { Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18) }
        let response = HTTPURLResponse(url: request.url!, statusCode: answer.0, httpVersion: "HTTP/1.1",
                                       headerFields: ["Content-Type": "application/json"])!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data(answer.1.utf8))
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}

    private static func answer(path: String, form: [String: String], state: inout State) -> (Int, String) {
        switch path {
        case "/.well-known/openid-configuration" where state.discoveryStatus != 200:
            return (state.discoveryStatus, "{}")
        case "/.well-known/openid-configuration" where state.discovery != nil:
            return (200, state.discovery!)
        case "/.well-known/openid-configuration":
            return (200, """
                {"issuer": "\(base)", "authorization_endpoint": "\(base)/authorize", "token_endpoint": "\(base)/token",
                 "userinfo_endpoint": "\(base)/userinfo", "revocation_endpoint": "\(base)/revoke"}
                """)
        case "/token" where form["grant_type"] == "refresh_token" && state.refreshStatus != nil:
            return (state.refreshStatus!, state.refreshBody)
        case "/token" where form["grant_type"] == "refresh_token" && state.refusesRefresh:
            return (400, #"{"error": "invalid_grant"}"#)
        case "/token":
            state.issued += 1
            let refresh = form["grant_type"] == "refresh_token" && !state.rotates ? "" : #", "refresh_token": "refresh-\#(state.issued)""#
            return (200, #"{"access_token": "access-\#(state.issued)", "token_type": "Bearer", "expires_in": 3600\#(refresh)}"#)
        case "/userinfo": return (200, state.userinfoBody ?? #"{"sub": "alice", "email_verified": true, "age": 42}"#)
        case "/revoke": return (200, "")
        default: return (404, "{}")
        }
    }

    /// The request's form body, from its body or (URLSession hands protocols a stream) its stream.
    private static func form(of request: URLRequest) -> [String: String] {
        var data = request.httpBody ?? Data()
        if data.isEmpty, let stream = request.httpBodyStream {
            stream.open()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while stream.hasBytesAvailable {
                let read = stream.read(&buffer, maxLength: buffer.count)
                guard read > 0 else { break }
                data.append(buffer, count: read)
            }
            stream.close()
        }
        var fields: [String: String] = [:]
        for pair in String(decoding: data, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }
}
