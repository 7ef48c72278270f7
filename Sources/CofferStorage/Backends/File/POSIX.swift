#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Thin wrappers over the POSIX calls the file backends use, turning failures into
/// ``StorageError/io(operation:path:code:)``.
enum POSIX {
    /// Runs a call that returns -1 and sets `errno` on failure, retrying on `EINTR`.
    @discardableResult
    static func call(_ operation: String, _ path: String, _ body: () -> Int32) throws(StorageError) -> Int32 {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            throw .io(operation: operation, path: path, code: code)
        }
    }

    /// Writes all of `data` to `fd`.
    static func writeAll(_ fd: Int32, _ data: Data, path: String) throws(StorageError) {
        var failure: StorageError?
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let written = FileFaults.inject(.write) { systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset) }
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = .io(operation: "write", path: path, code: errno)
                    return
                }
                offset += written
            }
        }
        if let failure { throw failure }
    }

    /// Reads `fd` to its end, or its first `prefix` bytes (fewer when it is shorter).
    static func readAll(_ fd: Int32, path: String, prefix: Int? = nil) throws(StorageError) -> Data {
        var data = Data()
        // Sized from fstat (plus one byte to see the end in one read), within 4 KiB to 64 KiB;
        // for a prefix, its size.
        var info = stat()
        let expected = fstat(fd, &info) == 0 ? Int(info.st_size) + 1 : 0
        var chunk = [UInt8](repeating: 0, count: prefix ?? min(max(expected, 4096), 64 * 1024))
        while true {
            let wanted = prefix.map { $0 - data.count } ?? chunk.count
            if wanted == 0 { return data }
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress!, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "read", path: path, code: errno)
            }
            if count == 0 { return data }
            data.append(contentsOf: chunk[0..<count])
        }
    }

    /// Flushes a directory's entries (a rename or unlink inside it) to disk.
    static func syncDirectory(_ path: String) throws(StorageError) {
        let fd = try call("open directory", path) { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(fd) }
        try call("fsync directory", path) { FileFaults.inject(.syncDirectory) { fsync(fd) } }
    }

    /// Creates a new file 0600 for writing, never following a symbolic link and never opening
    /// a file that is already there (`O_CREAT | O_EXCL | O_NOFOLLOW`). A leftover at `path` (a
    /// killed writer's temporary file, or anything planted there) is removed and the create
    /// retried once; call it only where you hold the lock that serialises writers of `path`.
    static func createExclusively(_ path: String) throws(StorageError) -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        var fd = FileFaults.inject(.create) { open(path, flags, 0o600) }
        if fd == -1, errno == EEXIST {
            if unlink(path) == -1, errno != ENOENT { throw .io(operation: "remove the leftover", path: path, code: errno) }
            fd = FileFaults.inject(.create) { open(path, flags, 0o600) }
        }
        guard fd != -1 else { throw .io(operation: "create", path: path, code: errno) }
        // The mode given to open is filtered by the umask, which can only take bits away: make it
        // exactly 0600 when the umask took some (only then, since a mode change is one more
        // metadata update for the write's fsync to journal). Its type and owner are checked on
        // the same `fstat`; its mode is then 0600, as read or as just set.
        do {
            var info = stat()
            try call("inspect", path) { fstat(fd, &info) }
            try FileTrust.check(info, path: path, .privateFile, checkingMode: false)
            if info.st_mode & 0o7777 != 0o600 { try call("set permissions of", path) { fchmod(fd, 0o600) } }
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        return fd
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
private let systemRead = Glibc.read
#elseif canImport(Musl)
private let systemWrite = Musl.write
private let systemRead = Musl.read
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
private let systemRead = Darwin.read
#endif
