#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// An advisory `flock` on a lock file, shared between processes (and between threads of one
/// process, since each use opens its own descriptor).
///
/// The lock file is created 0600 and never removed: removing it while another process waits on
/// it would let two processes hold "the" lock at once. It is opened without following a
/// symbolic link and must pass ``FileTrust`` (owned by you, not writable by others); its
/// directory must already exist (see ``FileTrust/prepareDirectory(_:)``).
public struct FileLock: Sendable {
    /// The lock file.
    public let path: String

    /// A lock on the file at `path` (created 0600 on first use).
    public init(path: String) {
        self.path = path
    }

    /// Runs `body` holding the lock exclusively, blocking the thread until it is free.
    public func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        try withLock(LOCK_EX, body)
    }

    /// Runs `body` holding the lock shared with other readers. Where the lock file cannot be
    /// created (a read-only directory or medium), no writer can change the data either, so
    /// `body` runs without it.
    public func withSharedLock<R>(_ body: () throws -> R) throws -> R {
        try withLock(LOCK_SH, body)
    }

    private func withLock<R>(_ mode: Int32, _ body: () throws -> R) throws -> R {
        try FileTrust.checkExistingDirectory((path as NSString).deletingLastPathComponent)
        // O_NOFOLLOW: a symbolic link planted here must not make Coffer create or lock a file
        // elsewhere. The lock file is checked like any other: yours, not writable by others.
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        if fd == -1 {
            let code = errno
            if mode == LOCK_SH, code == EACCES || code == EROFS { return try body() }
            if code == ELOOP { throw FileTrust.untrustedLink(path) }
            throw StorageError.io(operation: "open lock file", path: path, code: code)
        }
        defer { close(fd) }
        try FileTrust.check(descriptor: fd, path: path, .file)
        try POSIX.call("lock", path) { flock(fd, mode) }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
