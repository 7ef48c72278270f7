#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A one-line record Coffer keeps in a data directory, such as where a store's key is
/// (`keystore`) or which backend holds the accounts: read and written as every Coffer file is
/// (checked with ``FileTrust``, created 0600, replaced atomically under its lock).
public struct RecordFile: Sendable {
    private let file: DurableFile

    /// The record at `url`.
    public init(_ url: URL) {
        file = DurableFile(url: url)
    }

    /// Where the record is.
    public var path: String { file.path }

    /// The most a record may be: one short line.
    static let maximumSize = 256

    /// The recorded value without surrounding whitespace, or `nil` when there is no record.
    /// A file larger than a record is refused without being read whole.
    public func read() throws(StorageError) -> String? {
        guard try FileTrust.checkExistingDirectory(file.directory.path),
              let fd = try FileTrust.openForReading(file.path, .file) else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: Self.maximumSize + 1)
        var count = 0
        while count < buffer.count {
            let read = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if read == 0 { break }
            if read < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "read", path: file.path, code: errno)
            }
            count += read
        }
        guard count <= Self.maximumSize else {
            throw .corrupted(location: file.path, reason: "it is larger than the one short line a record holds")
        }
        return String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Records `value` (one line), replacing what was there.
    public func write(_ value: String) throws {
        try FileTrust.prepareDirectory(file.directory)
        try file.write(Data((value + "\n").utf8))
    }

    /// The recorded value, or, when there is none yet, `make()`'s, recorded: read and written
    /// under the record's lock, so processes choosing at once all get the first one's choice.
    public func recordIfAbsent(_ make: () throws -> String) throws -> String {
        try FileTrust.prepareDirectory(file.directory)
        return try file.update { existing in
            if let existing {
                let text = String(decoding: existing.prefix(Self.maximumSize + 1), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                return (nil, text)
            }
            let value = try make()
            return (Data((value + "\n").utf8), value)
        }
    }

    /// Removes the record (durably: its directory is synced); a missing one is no error.
    public func remove() throws {
        try file.remove()
    }
}
