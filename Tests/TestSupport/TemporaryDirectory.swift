import Foundation

/// A fresh directory under the system's temporary folder, removed when the test that made it
/// calls `remove()` (tests use `defer`).
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(_ label: String = #function) {
        _ = SuiteTraceLog.installed
        let name = "coffer-tests-\(label.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString.prefix(8))"
        url = FileManager.default.temporaryDirectory.appendingPathComponent(name, isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func appending(_ path: String) -> URL { url.appendingPathComponent(path) }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The permission bits of a file or directory.
public func permissions(of url: URL) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    return (attributes[.posixPermissions] as! NSNumber).intValue & 0o777
}

/// Writes an executable script (0755) at `url`, through a close-on-exec descriptor: a process
/// another test spawns meanwhile must not inherit it open for writing, or running the script
/// fails with "Text file busy".
public func writeExecutable(_ text: String, at url: URL) throws {
    let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count, fchmod(fd, 0o755) == 0 else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}
