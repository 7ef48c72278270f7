import CofferStorage
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A one-user HTTP listener on 127.0.0.1 for an authorization redirect (RFC 8252 §7.3): an
/// ephemeral port, requests read with a small size and time limit, each peer checked to be
/// this process's user before anything it sent is read.
final class LoopbackListener: Sendable {
    /// The port the kernel gave.
    let port: UInt16
    private let socket: Int32
    private let closed = Atomic<Bool>(false)
    private let local: sockaddr_in

    /// The largest request read (a redirect's request line and headers).
    static let requestLimit = 16_384

    /// Listens on 127.0.0.1 at `port` (0: one the kernel chooses).
    init(port: UInt16 = 0) throws(OidcError) {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Self.failure("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Self.failure("bind", code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Self.failure("getsockname", code)
        }
        self.socket = fd
        self.local = address
        self.port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close() }

    /// Stops listening; a waiting ``next(until:cancelled:)`` returns `nil`.
    func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { Glibc.close(socket) }
    }

    /// Waits at most a quarter of a second, and never past `deadline`, for `descriptor` to be
    /// readable (a connection to accept, bytes to read): `true` when it is, `false` when it is
    /// not yet (check the cancel flag and wait again), `nil` once `deadline` has passed.
    static func readable(_ descriptor: Int32, until deadline: ContinuousClock.Instant) -> Bool? {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return nil }
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let wait = min(250, max(1, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
        return poll(&ready, 1, wait) > 0
    }

    private static func failure(_ call: String, _ code: Int32) -> OidcError {
        .unknown(message: "The sign-in's redirect listener on 127.0.0.1 could not start (\(call): \(String(cString: strerror(code))))")
    }

    /// The next request from this user, or `nil` once `deadline` passes or `cancelled` is set.
    /// Connections from another user are answered 403 and requests that are not a GET are
    /// answered 400, unread further; neither ends the wait.
    ///
    /// `request` reads what the peer sent (``LoopbackRequest/read(until:cancelled:)``) and says
    /// whether it is a GET to hand on.
    func next(until deadline: ContinuousClock.Instant, cancelled: borrowing Atomic<Bool>,
              request read: (LoopbackRequest) -> Bool) -> LoopbackRequest? {
        while !cancelled.load(ordering: .acquiring), !closed.load(ordering: .acquiring) {
            guard let ready = Self.readable(socket, until: deadline) else { return nil }
            guard ready else { continue }
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let connection = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(socket, $0, &length) }
            }
            guard connection >= 0 else { continue }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            let request = LoopbackRequest(connection: connection)
            guard LoopbackPeer.owner(peer: peer, local: local) == geteuid() else {
                request.respond(status: 403, title: "Not yours", text: "This sign-in belongs to another user of this machine.")
                continue
            }
            guard read(request) else {
                request.respond(status: 400, title: "Bad request", text: "This address only takes the provider's redirect.")
                continue
            }
            return request
        }
        return nil
    }
}

/// One request to the listener: its path and query, and the connection to answer on.
final class LoopbackRequest: @unchecked Sendable {
    // @unchecked Sendable: a request is read and answered by the one thread that accepted it;
    // the type crosses no other.
    private let connection: Int32
    private(set) var path = ""
    private(set) var query: [URLQueryItem] = []

    init(connection: Int32) {
        self.connection = connection
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(connection) }

    /// Reads the request line and headers: at most ``LoopbackListener/requestLimit`` bytes,
    /// until `deadline` at the latest however slowly they come, or until `cancelled`; `false`
    /// when it is not a GET of an absolute path.
    func read(until deadline: ContinuousClock.Instant, cancelled: borrowing Atomic<Bool>) -> Bool {
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while received.count < LoopbackListener.requestLimit, !cancelled.load(ordering: .acquiring) {
            guard let ready = LoopbackListener.readable(connection, until: deadline) else { return false }
            guard ready else { continue }
            let count = recv(connection, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { break }
            received += buffer[0..<count]
            if received.count >= 4, received.suffix(min(received.count, count + 3)).windows(end) { break }
        }
        guard let lineEnd = received.firstIndex(of: UInt8(ascii: "\r")),
              let line = String(bytes: received[..<lineEnd], encoding: .utf8) else { return false }
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[0] == "GET", parts[1].hasPrefix("/"), parts[2].hasPrefix("HTTP/1."),
              let components = URLComponents(string: "http://127.0.0.1" + parts[1]) else { return false }
        path = components.path
        query = components.queryItems ?? []
        return true
    }

    /// The value of the query parameter `name` (the first, if repeated).
    func value(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// Sends the browser on to `location` (303) and closes the connection.
    func redirect(to location: URL) {
        transmit("HTTP/1.1 303 See Other\r\nLocation: \(location.absoluteString)\r\nContent-Length: 0\r\n"
            + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n")
    }

    /// Answers with a small page and closes the connection.
    func respond(status: Int, title: String, text: String, body extra: String = "") {
        let escaped = { (text: String) in
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        }
        let page = "<!doctype html><meta charset=\"utf-8\"><title>\(escaped(title))</title><h1>\(escaped(title))</h1><p>\(escaped(text))</p>\(extra)\n"
        let reason = [200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found"][status] ?? "Error"
        let head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(page.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
        transmit(head + page)
    }

    private func transmit(_ text: String) {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { break }
            sent += count
        }
        shutdown(connection, Int32(SHUT_WR))
    }
}

private extension ArraySlice where Element == UInt8 {
    /// Whether `pattern` occurs in the slice.
    func windows(_ pattern: [UInt8]) -> Bool {
        guard count >= pattern.count else { return false }
        var index = startIndex
        while index + pattern.count <= endIndex {
            if self[index..<(index + pattern.count)].elementsEqual(pattern) { return true }
            index += 1
        }
        return false
    }
}
