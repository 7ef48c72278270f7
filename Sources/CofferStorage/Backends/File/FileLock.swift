#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

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
    /// The directory that holds it, checked before each use.
    private let directoryPath: String

    /// A lock on the file at `path` (created 0600 on first use).
    public init(path: String) {
        self.path = path
        self.directoryPath = FileTrust.parentDirectory(of: path)
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

    /// Takes the lock exclusively without blocking a thread while it waits (it tries, then
    /// sleeps a little, up to 50 ms at a time), for async code whose threads must not be held
    /// up by another process. The lock is held until ``Held/release()``.
    public func exclusive() async throws -> Held {
        try await held(LOCK_EX, waitingAtMost: nil)!
    }

    /// Takes the lock exclusively as ``exclusive()`` does, giving up after `limit`: `nil` when
    /// another holder kept it that long.
    public func exclusive(waitingAtMost limit: Duration) async throws -> Held? {
        try await held(LOCK_EX, waitingAtMost: limit)
    }

    /// Takes the lock shared with other holders of a shared lock (never with an exclusive one),
    /// without blocking a thread while it waits, until ``Held/release()``. Where the lock file
    /// cannot be created (a read-only directory or medium), nothing can take it exclusively
    /// either: a released ``Held`` is returned.
    public func shared() async throws -> Held {
        try await held(LOCK_SH, waitingAtMost: nil)!
    }

    private func held(_ mode: Int32, waitingAtMost limit: Duration?) async throws -> Held? {
        guard let fd = try openChecked(mode) else { return Held(nil) }
        let deadline = limit.map { ContinuousClock.now + $0 }
        var pause: Duration = .milliseconds(1)
        while flock(fd, mode | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                close(fd)
                throw StorageError.io(operation: "lock", path: path, code: code)
            }
            if let deadline, ContinuousClock.now >= deadline {
                close(fd)
                return nil
            }
            do {
                try await Task.sleep(for: pause)
            } catch {
                close(fd)
                throw error
            }
            pause = min(pause * 2, .milliseconds(50))
        }
        return Held(fd)
    }

    /// A lock taken with ``exclusive()``; released once, by ``release()`` or when dropped.
    public final class Held: Sendable {
        private let fd: Mutex<Int32?>

        init(_ fd: Int32?) {
            self.fd = Mutex(fd)
        }

        /// Releases the lock (closing its descriptor); later calls do nothing.
        public func release() {
            if let fd = fd.withLock({ fd in defer { fd = nil }; return fd }) { close(fd) }
        }

        deinit { release() }
    }

    private func withLock<R>(_ mode: Int32, _ body: () throws -> R) throws -> R {
        // A shared lock where the file cannot be created: nothing can write there either.
        guard let fd = try openChecked(mode) else { return try body() }
        defer { close(fd) }
        try POSIX.call("lock", path) { flock(fd, mode) }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// Opens (creating 0600) and checks the lock file; `nil` for a shared lock that cannot be
    /// created (a read-only directory or medium).
    private func openChecked(_ mode: Int32) throws -> Int32? {
        try FileTrust.checkExistingDirectory(directoryPath)
        // O_NOFOLLOW: a symbolic link planted here must not make Coffer create or lock a file
        // elsewhere. The lock file is checked like any other: yours, not writable by others.
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        if fd == -1 {
            let code = errno
            if mode == LOCK_SH, code == EACCES || code == EROFS { return nil }
            if code == ELOOP { throw FileTrust.untrustedLink(path) }
            throw StorageError.io(operation: "open lock file", path: path, code: code)
        }
        do {
            let info = try FileTrust.check(descriptor: fd, path: path, .file)
            // A umask that takes the owner's bits away (0277) made it 0400 when it was created:
            // this process holds it open for writing, but the next open for writing (as anyone
            // but root) would be refused. Yours, as just checked: give it the 0600 it was meant to have.
            if info.st_mode & 0o600 != 0o600 { try POSIX.call("set permissions of", path) { fchmod(fd, 0o600) } }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }
}
