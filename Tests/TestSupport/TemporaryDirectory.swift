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
