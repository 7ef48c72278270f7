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
    /// Replaces the file at `path` with `data`.
    ///
    /// - Throws: ``StorageError/untrusted(path:owner:mode:reason:)`` for a refused target or
    ///   directory, ``StorageError/io(operation:path:code:)`` when writing fails (nothing is
    ///   left behind then).
    public static func write(_ data: Data, to path: String) throws(StorageError) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        try FileTrust.checkReplaceable(path)
        try FileTrust.checkCreatingIn(directory)

        let temporary = directory + "/." + url.lastPathComponent + "." + UUID().uuidString.prefix(12) + ".tmp"
        let fd = try POSIX.createExclusively(temporary)
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            try POSIX.writeAll(fd, data, path: temporary)
            try POSIX.call("fsync", temporary) { fsync(fd) }
        } catch {
            close(fd)
            throw error
        }
        try POSIX.call("close", temporary) { close(fd) }
        try POSIX.call("rename", path) { rename(temporary, path) }
        renamed = true
        try POSIX.syncDirectory(directory)
    }
}
