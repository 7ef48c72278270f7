#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Writes a file a person asked for (an export, a backup) the way Coffer writes its own: 0600
/// from the first byte, atomically and durably.
///
/// The bytes go to a new temporary file beside the target, created
/// `O_CREAT | O_EXCL | O_NOFOLLOW` 0600 under a random name, so no other user can open it while
/// it is written; it is `fsync`ed and renamed over the target, and the directory is `fsync`ed.
/// A target that is a symbolic link, or exists and is not a regular file you own (a device
/// such as `/dev/stdout`, a FIFO), is refused, as is a directory that belongs to another user
/// (not root) or that others can write to without the sticky bit (where another user could swap
/// the file after it is written).
public enum PrivateFile {
    /// Reads a file of secrets (a key a person keeps for Coffer): it must be a regular file,
    /// yours, and not readable or writable by group or others (``FileTrust``, checked on the
    /// open descriptor; a symbolic link is refused). `nil` when there is no file. A file larger
    /// than `limit` bytes is refused unread (``StorageError/corrupted(location:reason:)``).
    public static func read(_ path: String, limit: Int = 1 << 20) throws(StorageError) -> Data? {
        try FileTrust.checkPath(FileTrust.parentDirectory(of: path))
        guard let fd = try FileTrust.openForReading(path, .privateFile) else { return nil }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, Int(info.st_size) > limit {
            throw .corrupted(location: path, reason: "it is \(info.st_size) bytes, more than a key file holds (\(limit))")
        }
        return try POSIX.readAll(fd, path: path)
    }

    /// Creates the file at `path` holding `data`, 0600 from its first byte, durably; refuses
    /// (``StorageError/untrusted(path:owner:mode:reason:)``) when something is there already,
    /// so nothing is ever replaced: the new file is linked into place, which fails when the
    /// name exists.
    public static func create(_ data: Data, at path: String) throws(StorageError) {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileTrust.checkCreatingIn(directory)
        let temporary = try durableTemporary(data, beside: path)
        defer { unlink(temporary) }
        if link(temporary, path) != 0 {
            if errno == EEXIST { throw occupied(path, .alreadyExists(newDirectoryOnly: false)) }
            throw .io(operation: "create", path: path, code: errno)
        }
        try POSIX.syncDirectory(directory)
    }

    /// Creates a new directory at `path`, 0700 from the start, for files a person asked for (QR
    /// codes of an export); refuses (``StorageError/untrusted(path:owner:mode:reason:)``) when
    /// anything is there already, so files are never mixed into a directory someone else made.
    public static func createDirectory(at path: String) throws(StorageError) {
        let parent = FileTrust.parentDirectory(of: path)
        try FileTrust.checkCreatingIn(parent.isEmpty ? "." : parent)
        guard mkdir(path, 0o700) == 0 else {
            if errno == EEXIST { throw occupied(path, .alreadyExists(newDirectoryOnly: true)) }
            throw .io(operation: "create directory", path: path, code: errno)
        }
        // mkdir's mode is filtered by the umask; 0700 exactly, checked through a descriptor.
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd != -1 else { throw .io(operation: "open directory", path: path, code: errno) }
        defer { close(fd) }
        try POSIX.call("set permissions of", path) { fchmod(fd, 0o700) }
        try FileTrust.check(descriptor: fd, path: path, .directory)
        try POSIX.syncDirectory(parent.isEmpty ? "." : parent)
    }

    /// The refusal for a name that is taken, with what is there (its owner and mode).
    private static func occupied(_ path: String, _ reason: TrustProblem) -> StorageError {
        var info = stat()
        let found = lstat(path, &info) == 0
        return .untrusted(path: path, owner: found ? UInt32(info.st_uid) : 0, mode: found ? UInt32(info.st_mode) & 0o7777 : 0,
                          reason: reason)
    }

    /// Replaces the file at `path` with `data`.
    ///
    /// - Parameters:
    ///   - data: What the file will hold.
    ///   - path: The file to replace (or create).
    ///   - readableByEveryone: `true` for a file that holds no secret and others must read (a
    ///     manual page installed for every user): it is made 0644 before it takes the target's
    ///     name, so no moment exists where the name holds it with another mode.
    /// - Throws: ``StorageError/untrusted(path:owner:mode:reason:)`` for a refused target or
    ///   directory, ``StorageError/io(operation:path:code:)`` when writing fails (nothing is
    ///   left behind then).
    public static func write(_ data: Data, to path: String, readableByEveryone: Bool = false) throws(StorageError) {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileTrust.checkReplaceable(path)
        try FileTrust.checkCreatingIn(directory)

        let temporary = try durableTemporary(data, beside: path, mode: readableByEveryone ? 0o644 : 0o600)
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        try POSIX.call("rename", path) { rename(temporary, path) }
        renamed = true
        try POSIX.syncDirectory(directory)
    }

    /// Removes the temporary files that writes of `path` killed halfway left beside it
    /// (`.NAME.XXXXXXXXXXXX.tmp`, regular, yours), once they are a minute old: a write going on
    /// now may own a newer one. Nothing else is touched; what cannot be removed is left.
    public static func removeStaleTemporaries(of path: String) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let prefix = "." + url.lastPathComponent + "."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") && name.count == prefix.count + 12 + 4 {
            let temporary = directory + "/" + name
            var info = stat()
            guard lstat(temporary, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(),
                  time(nil) - info.st_mtim.tv_sec > 60 else { continue }
            unlink(temporary)
        }
    }

    /// Writes `data` to a new 0600 temporary file beside `path` (created exclusively, written,
    /// `fsync`ed, closed; then given `mode`) and returns its path; on failure nothing is left
    /// behind. The caller links or renames it into place and removes what remains.
    private static func durableTemporary(_ data: Data, beside path: String, mode: mode_t = 0o600) throws(StorageError) -> String {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().path + "/." + url.lastPathComponent + "." + UUID().uuidString.prefix(12) + ".tmp"
        let fd = try POSIX.createExclusively(temporary)
        do {
            try POSIX.writeAll(fd, data, path: temporary)
            if mode != 0o600 { try POSIX.call("set permissions of", temporary) { fchmod(fd, mode) } }
            try POSIX.call("fsync", temporary) { fsync(fd) }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        do {
            try POSIX.call("close", temporary) { close(fd) }
        } catch {
            unlink(temporary)
            throw error
        }
        return temporary
    }
}
