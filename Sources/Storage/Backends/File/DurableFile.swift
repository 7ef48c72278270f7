#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// One file whose replacement is atomic and durable, shared safely between processes.
///
/// - Writes go to a temporary file in the same directory, which is written, `fsync`ed, renamed
///   over the target, and then the directory is `fsync`ed: after a crash the file holds the old
///   bytes or the new ones, never a mix.
/// - An advisory `flock` on a companion lock file (`.NAME.lock`) serialises writers across
///   processes; readers take it shared, so they never see a half-finished update sequence.
/// - Files are created 0600 and directories 0700, whatever the umask.
///
/// Operations block the calling thread while they wait for the lock and the disk.
struct DurableFile: Sendable {
    /// The file's location.
    let url: URL

    init(url: URL) {
        self.url = url
    }

    var path: String { url.path }
    var directory: URL { url.deletingLastPathComponent() }
    var lockPath: String { directory.appendingPathComponent(".\(url.lastPathComponent).lock").path }

    /// The file's bytes, or `nil` when it does not exist.
    func read() throws -> Data? {
        try withLock(LOCK_SH) { try readUnlocked() }
    }

    /// Replaces the file's bytes with `data`.
    func write(_ data: Data) throws {
        try POSIX.makeDirectory(directory)
        try withLock(LOCK_EX) { try replaceUnlocked(with: data) }
    }

    /// Removes the file. Removing a file that does not exist succeeds.
    func remove() throws {
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        try withLock(LOCK_EX) {
            if unlink(path) == -1 {
                if errno == ENOENT { return }
                throw StorageError.io(operation: "delete", path: path, code: errno)
            }
            try POSIX.syncDirectory(directory.path)
        }
    }

    /// Reads the file, lets `transform` compute its new contents, and writes them, all under one
    /// exclusive lock so that no other process can change the file in between. `transform`
    /// returns `nil` to leave the file as it is.
    func update<R>(_ transform: (Data?) throws -> (newContents: Data?, result: R)) throws -> R {
        try POSIX.makeDirectory(directory)
        return try withLock(LOCK_EX) {
            let (newContents, result) = try transform(try readUnlocked())
            if let newContents { try replaceUnlocked(with: newContents) }
            return result
        }
    }

    // MARK: - Under the lock

    private func readUnlocked() throws(StorageError) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd == -1 {
            if errno == ENOENT { return nil }
            throw .io(operation: "open", path: path, code: errno)
        }
        defer { close(fd) }
        return try POSIX.readAll(fd, path: path)
    }

    private func replaceUnlocked(with data: Data) throws(StorageError) {
        removeOrphanedTemporaryFiles()
        let temporary = directory.appendingPathComponent(
            "\(temporaryPrefix)\(String(UInt64.random(in: 0...UInt64.max), radix: 16))").path
        let fd = try POSIX.call("create", temporary) {
            open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            try POSIX.call("set permissions of", temporary) { fchmod(fd, 0o600) }
            try POSIX.writeAll(fd, data, path: temporary)
            try POSIX.call("fsync", temporary) { fsync(fd) }
        } catch {
            close(fd)
            throw error
        }
        try POSIX.call("close", temporary) { close(fd) }
        try POSIX.call("rename", path) { rename(temporary, path) }
        renamed = true
        try POSIX.syncDirectory(directory.path)
    }

    private var temporaryPrefix: String { ".\(url.lastPathComponent).tmp-" }

    /// Removes temporary files a killed writer left behind. Called with the exclusive lock held,
    /// so no live writer of this file has one: any that exists is an orphan (and may hold a copy
    /// of the data).
    private func removeOrphanedTemporaryFiles() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(temporaryPrefix) {
            unlink(directory.appendingPathComponent(name).path)
        }
    }

    private func withLock<R>(_ mode: Int32, _ body: () throws -> R) throws -> R {
        if mode == LOCK_SH, !FileManager.default.fileExists(atPath: directory.path) {
            // Nothing to read and nothing to lock; do not create directories just to read.
            return try body()
        }
        let lock = FileLock(path: lockPath)
        return try mode == LOCK_SH ? lock.withSharedLock(body) : lock.withExclusiveLock(body)
    }
}
