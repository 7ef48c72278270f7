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

    /// Reads `fd` to its end.
    static func readAll(_ fd: Int32, path: String) throws(StorageError) -> Data {
        var data = Data()
        // Sized from fstat (plus one byte to see the end in one read), within 4 KiB to 64 KiB.
        var info = stat()
        let expected = fstat(fd, &info) == 0 ? Int(info.st_size) + 1 : 0
        var chunk = [UInt8](repeating: 0, count: min(max(expected, 4096), 64 * 1024))
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress!, $0.count) }
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

    /// Creates `url` and any missing parents with mode 0700. Existing directories keep their mode.
    static func makeDirectory(_ url: URL) throws(StorageError) {
        let path = url.path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .io(operation: "use as a directory", path: path, code: ENOTDIR) }
            return
        }
        let parent = url.deletingLastPathComponent()
        if parent.path != path { try makeDirectory(parent) }
        if mkdir(path, 0o700) == -1, errno != EEXIST {
            throw .io(operation: "create directory", path: path, code: errno)
        }
        // mkdir's mode is filtered by the umask; make it exactly 0700.
        try call("set permissions of", path) { chmod(path, 0o700) }
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
