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
///   processes (and threads). Readers take no lock: a rename is atomic, so opening the file
///   always finds the whole old version or the whole new one.
/// - The temporary file has one fixed name (`.NAME.tmp`), safe because only the lock holder
///   writes it and it is created `O_EXCL | O_NOFOLLOW`: a file a killed writer left behind is
///   removed and the create retried, and nothing planted there (a symbolic link, another user's
///   file) is ever written through.
/// - Files are created 0600 and directories 0700, whatever the umask. The directory, the lock
///   file and the file read are checked with ``FileTrust`` before use.
///
/// Operations block the calling thread while they wait for the lock and the disk.
struct DurableFile: Sendable {
    /// The file's location.
    let url: URL
    /// Its path, its directory, its lock file and its temporary file, worked out once (building
    /// paths from URLs costs more than the system calls they are for).
    let path: String
    let directory: URL
    let directoryPath: String
    let lockPath: String
    let lock: FileLock
    let temporaryPath: String
    /// What the file (and its directory) must satisfy before it is used.
    let requirement: FileTrust.Requirement
    /// A file larger than this is refused unread (a crafted key file must not fill memory).
    let sizeLimit: Int?

    init(url: URL, requirement: FileTrust.Requirement = .file, sizeLimit: Int? = nil) {
        self.url = url
        self.requirement = requirement
        self.sizeLimit = sizeLimit
        self.path = url.path
        self.directory = url.deletingLastPathComponent()
        self.directoryPath = directory.path
        // isDirectory: false, or Foundation looks at the disk to decide.
        self.lockPath = directory.appendingPathComponent(".\(url.lastPathComponent).lock", isDirectory: false).path
        self.lock = FileLock(path: lockPath)
        self.temporaryPath = directory.appendingPathComponent(".\(url.lastPathComponent).tmp", isDirectory: false).path
    }

    /// The file's bytes, or `nil` when it does not exist.
    func read() throws(StorageError) -> Data? {
        try readUnlocked()
    }

    /// The file's first `count` bytes (all of them when it is shorter), or `nil` when it does not
    /// exist: what a header needs, whatever the file's size.
    func read(prefix count: Int) throws(StorageError) -> Data? {
        guard try FileTrust.checkExistingDirectory(directoryPath),
              let fd = try FileTrust.openForReading(path, requirement) else { return nil }
        defer { close(fd) }
        return try POSIX.readAll(fd, path: path, prefix: count)
    }

    /// Replaces the file's bytes with `data`.
    func write(_ data: Data) throws {
        try exclusively { try replaceUnlocked(with: data) }
    }

    /// Removes the file. Removing a file that does not exist succeeds.
    func remove() throws {
        guard try FileTrust.checkExistingDirectory(directoryPath) else { return }
        try exclusively {
            unlink(temporaryPath)
            if unlink(path) == -1 {
                if errno == ENOENT { return }
                throw StorageError.io(operation: "delete", path: path, code: errno)
            }
            try POSIX.syncDirectory(directoryPath)
        }
    }

    /// Reads the file, lets `transform` compute its new contents, and writes them, all under one
    /// exclusive lock so that no other process can change the file in between. `transform`
    /// returns `nil` to leave the file as it is.
    func update<R>(_ transform: (Data?) throws -> (newContents: Data?, result: R)) throws -> R {
        return try exclusively {
            let (newContents, result) = try transform(try readUnlocked())
            if let newContents { try replaceUnlocked(with: newContents) }
            return result
        }
    }

    // MARK: - Under the lock

    private func readUnlocked() throws(StorageError) -> Data? {
        guard try FileTrust.checkExistingDirectory(directoryPath),
              let fd = try FileTrust.openForReading(path, requirement) else { return nil }
        defer { close(fd) }
        var info = stat()
        if let sizeLimit, fstat(fd, &info) == 0, Int(info.st_size) > sizeLimit {
            throw .corrupted(location: path, reason: "it is \(info.st_size) bytes, more than such a file holds (\(sizeLimit))")
        }
        return try POSIX.readAll(fd, path: path)
    }

    private func replaceUnlocked(with data: Data) throws(StorageError) {
        let temporary = temporaryPath
        let fd = try POSIX.createExclusively(temporary)
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            try POSIX.writeAll(fd, data, path: temporary)
            try POSIX.call("fsync", temporary) { FileFaults.inject(.fsync) { fsync(fd) } }
        } catch {
            close(fd)
            throw error
        }
        // A failed close still releases the descriptor (an injected failure closes it too); the
        // data may not have reached the disk, so the write fails.
        try POSIX.call("close", temporary) {
            let result = close(fd)
            return FileFaults.inject(.close) { result }
        }
        try POSIX.call("rename", path) { FileFaults.inject(.rename) { rename(temporary, path) } }
        renamed = true
        try POSIX.syncDirectory(directoryPath)
    }

    private func exclusively<R>(_ body: () throws -> R) throws -> R {
        try FileTrust.prepareDirectory(atPath: directoryPath)
        return try lock.withExclusiveLock(body)
    }
}
