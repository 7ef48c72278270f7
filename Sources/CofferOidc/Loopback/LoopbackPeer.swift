import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a loopback TCP connection: the kernel lists every TCP socket of
/// this network namespace in `/proc/net/tcp` with its owner's uid, so the peer's own socket
/// (local address = the peer's, remote = ours) names the user who connected.
///
/// The redirect listener answers only its own user: another local user who read the
/// authorization URL (from the browser's command line) could otherwise deliver a code of
/// their own with the right `state`, and the client would store their session as ours.
enum LoopbackPeer {
    /// The uid owning the socket at `peer` connected to `local`, or `nil` when the kernel
    /// lists none (then the connection is refused: unknown is not ours).
    static func owner(peer: sockaddr_in, local: sockaddr_in, table: String = "/proc/net/tcp") -> uid_t? {
        guard let text = read(table) else { return nil }
        let peerAddress = address(peer), localAddress = address(local)
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            guard fields.count > 7, fields[1] == peerAddress, fields[2] == localAddress else { continue }
            return uid_t(fields[7])
        }
        return nil
    }

    /// The whole of a /proc file: read until the end, since its size says 0 and a reader that
    /// trusts it (or one page) misses the sockets past the first 4 KiB.
    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
            bytes += buffer[0..<count]
        }
    }

    /// An address as the kernel prints it there: the 32-bit address as the machine stores it,
    /// then the port, both in upper-case hex (`0100007F:1F90` is 127.0.0.1:8080 on x86).
    static func address(_ socket: sockaddr_in) -> Substring {
        let host = String(socket.sin_addr.s_addr, radix: 16, uppercase: true)
        let port = String(UInt16(bigEndian: socket.sin_port), radix: 16, uppercase: true)
        return Substring(String(repeating: "0", count: 8 - host.count) + host + ":" + String(repeating: "0", count: 4 - port.count) + port)
    }
}
