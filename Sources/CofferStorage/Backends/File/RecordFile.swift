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

    /// The recorded value without surrounding whitespace, or `nil` when there is no record.
    public func read() throws(StorageError) -> String? {
        try file.read().map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// Records `value` (one line), replacing what was there.
    public func write(_ value: String) throws {
        try FileTrust.prepareDirectory(file.directory)
        try file.write(Data((value + "\n").utf8))
    }
}
