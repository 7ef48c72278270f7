#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// What Coffer requires of a file or directory before it reads, writes or locks it.
///
/// Another local user who owns, or can write to, a directory Coffer keeps secrets in can swap
/// its files, plant a key they know, or read what is stored. So every directory and file Coffer
/// opens or creates must be owned by the effective user and not writable by group or others;
/// files that hold key material must not be readable by them either. The checks run with
/// `fstat` on the opened descriptor, so nothing can be swapped between the check and the use,
/// and a failure is ``StorageError/untrusted(path:owner:mode:reason:)``, which names the path,
/// its owner and mode, and the fix.
///
/// Directories Coffer creates are made 0700 and files 0600 from their first byte, whatever the
/// umask; a mode Coffer sets is checked (`fchmod`'s result is never ignored).
public enum FileTrust {
    /// What a path must satisfy.
    public enum Requirement: Sendable {
        /// A directory owned by you that group and others cannot write to.
        case directory
        /// A regular file owned by you that group and others cannot write to.
        case file
        /// A regular file owned by you that group and others can neither read nor write (key
        /// material).
        case privateFile
    }

    /// Directories already checked by this process, so hot paths check each once. A directory
    /// that passed stays trustworthy: only its owner (you) or root can change its owner or mode,
    /// and no other user can swap any directory or link above it (``checkPath(_:)``).
    private static let trustedDirectories = Mutex<Set<String>>([])

    /// Checks the open descriptor `fd` of `path` against `requirement`; returns what `fstat`
    /// read, for a caller that needs more of it.
    @discardableResult
    public static func check(descriptor fd: Int32, path: String, _ requirement: Requirement) throws(StorageError) -> stat {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io(operation: "inspect", path: path, code: errno) }
        try check(info, path: path, requirement)
        return info
    }

    /// Checks `info` (from `fstat` on an open descriptor of `path`) against `requirement`;
    /// with `checkingMode` false, only its type and owner.
    static func check(_ info: stat, path: String, _ requirement: Requirement, checkingMode: Bool = true) throws(StorageError) {
        let owner = UInt32(info.st_uid), mode = UInt32(info.st_mode)
        let type = mode & UInt32(S_IFMT)
        func refuse(_ reason: TrustProblem) -> StorageError { .untrusted(path: path, owner: owner, mode: mode & 0o7777, reason: reason) }
        switch requirement {
        case .directory:
            guard type == UInt32(S_IFDIR) else { throw refuse(.notADirectory) }
        case .file, .privateFile:
            guard type != UInt32(S_IFDIR) else { throw refuse(.directoryNotFile) }
            guard type == UInt32(S_IFREG) else { throw refuse(.notARegularFile) }
        }
        let me = UInt32(geteuid())
        guard owner == me else { throw refuse(.foreignOwner(owner: owner, you: me)) }
        guard checkingMode else { return }
        if mode & 0o022 != 0 { throw refuse(.writableByOthers) }
        if requirement == .privateFile, mode & 0o044 != 0 { throw refuse(.readableKeyMaterial) }
    }

    /// Makes sure `url` is a directory Coffer may use: when it is missing it is created 0700
    /// (with any missing parents, also 0700); when it exists it must be owned by you and not
    /// writable by group or others.
    public static func prepareDirectory(_ url: URL) throws(StorageError) {
        try prepareDirectory(atPath: url.path)
    }

    /// ``prepareDirectory(_:)`` for a path already worked out (making a path of a URL decodes
    /// it again each time).
    package static func prepareDirectory(atPath path: String) throws(StorageError) {
        try checkDirectory(path, creating: true)
    }

    /// Checks the directory at `path` when it exists; `false` when it does not.
    @discardableResult
    public static func checkExistingDirectory(_ path: String) throws(StorageError) -> Bool {
        try checkDirectory(path, creating: false)
    }

    @discardableResult
    private static func checkDirectory(_ path: String, creating: Bool) throws(StorageError) -> Bool {
        let path = path.utf8.count > 1 && path.utf8.last == UInt8(ascii: "/") ? String(path.dropLast()) : path
        if trustedDirectories.withLock({ $0.contains(path) }) { return true }
        // No other user may be able to swap any part of the path (which makes the cache above,
        // and opening files by path later, safe).
        try checkPath(path)
        var created = false
        var fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd == -1, errno == ENOENT {
            guard creating else { return false }
            let parent = parentDirectory(of: path)
            if !parent.isEmpty, parent != path, access(parent, F_OK) != 0 { try checkDirectory(parent, creating: true) }
            try checkCreatingIn(parent.isEmpty ? "." : parent)
            if mkdir(path, 0o700) == 0 {
                created = true
            } else if errno != EEXIST {
                throw .io(operation: "create directory", path: path, code: errno)
            }
            fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard fd != -1 else {
            if errno == ENOTDIR { throw .untrusted(path: path, owner: 0, mode: 0, reason: .notADirectory) }
            throw .io(operation: "open directory", path: path, code: errno)
        }
        defer { close(fd) }
        if created {
            // mkdir's mode is filtered by the umask; make it exactly 0700.
            try POSIX.call("set permissions of", path) { fchmod(fd, 0o700) }
        }
        try check(descriptor: fd, path: path, .directory)
        trustedDirectories.withLock { _ = $0.insert(path) }
        return true
    }

    /// Checks a directory Coffer is about to create something in, and everything above it (see
    /// ``checkPath(_:)``): it must exist, belong to you or to root, and where others can write
    /// to it, have the sticky bit (like `/tmp`) so they cannot rename or replace what Coffer
    /// creates there.
    static func checkCreatingIn(_ path: String) throws(StorageError) {
        guard try checkPath(path) else { throw .io(operation: "open directory", path: path, code: ENOENT) }
    }

    /// Opens an existing file for reading without following a symbolic link and checks it;
    /// `nil` when there is no file at `path`.
    static func openForReading(_ path: String, _ requirement: Requirement) throws(StorageError) -> Int32? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd == -1 {
            switch errno {
            case ENOENT: return nil
            case ELOOP: throw untrustedLink(path)
            default: throw .io(operation: "open", path: path, code: errno)
            }
        }
        do {
            try check(descriptor: fd, path: path, requirement)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Opens the file at `path` for reading and writing, creating it 0600 when it is missing,
    /// never following a symbolic link, and checks it. The caller closes the descriptor.
    public static func openOrCreate(_ path: String, _ requirement: Requirement) throws(StorageError) -> Int32 {
        let flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK
        var created = true
        var fd = open(path, flags | O_CREAT | O_EXCL, 0o600)
        if fd == -1, errno == EEXIST {
            created = false
            fd = open(path, flags)
        }
        guard fd != -1 else {
            if errno == ELOOP { throw untrustedLink(path) }
            throw .io(operation: created ? "create" : "open", path: path, code: errno)
        }
        do {
            // The mode given to open is filtered by the umask; make a new file exactly 0600.
            if created { try POSIX.call("set permissions of", path) { fchmod(fd, 0o600) } }
            try check(descriptor: fd, path: path, requirement)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Checks the file at `path`, when there is one, without following a symbolic link.
    public static func checkExistingFile(_ path: String, _ requirement: Requirement) throws(StorageError) {
        if let fd = try openForReading(path, requirement) { close(fd) }
    }

    /// Checks a file Coffer is about to replace by renaming a new one over it, when there is
    /// one: not a symbolic link, a regular file, yours (its mode does not matter: the new file
    /// is 0600). Checked with `lstat`, as the file is never opened; the rename replaces the
    /// directory entry itself, so a link swapped in afterwards is replaced, not followed.
    /// ``PrivateFile/write(_:to:readableByEveryone:)`` checks this itself; call it to check
    /// several targets before writing any.
    public static func checkReplaceable(_ path: String) throws(StorageError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFLNK) { throw untrustedLink(path) }
        try check(info, path: path, .file, checkingMode: false)
    }

    /// The error for a symbolic link found where Coffer expects a file of its own.
    static func untrustedLink(_ path: String) -> StorageError {
        var info = stat()
        let found = lstat(path, &info) == 0
        return .untrusted(path: path, owner: found ? UInt32(info.st_uid) : 0, mode: found ? UInt32(info.st_mode) & 0o7777 : 0,
                          reason: .symbolicLink)
    }

    /// Forgets which directories were checked (for tests that change a directory's owner or
    /// mode after Coffer has used it).
    static func forgetCheckedDirectories() {
        trustedDirectories.withLock { $0.removeAll() }
    }
}

extension FileTrust {
    /// What a person reads about an untrusted path: what to do first, then why, in one
    /// sentence. Each cause has its own: a directory where a file goes, a symbolic link, another
    /// user's file, a mode that lets others read or write. Nothing here advises deleting.
    static func advice(path: String, owner: UInt32, mode: UInt32, reason: TrustProblem) -> String {
        let octal = String(mode, radix: 8)
        switch reason {
        case .directoryNotFile:
            return "\(path) is a directory; name a file instead (in it, or elsewhere)."
        case .symbolicLink, .foreignLinkOnTheWay:
            return "\(path) is a symbolic link, and Coffer never follows one for its own files: if it is yours, put the file "
                + "itself there (check where the link points first; someone else may have made it)."
        case .notADirectory, .notADirectoryOnTheWay:
            return "\(path) is not a directory, where Coffer needs one (\(reason)); name a directory instead."
        case .notARegularFile:
            return "\(path) is not a regular file (a device, a FIFO or a socket); name a file instead."
        case let .foreignOwner(owner, you), let .foreignDirectoryOnTheWay(owner, you):
            let below = if case .foreignDirectoryOnTheWay = reason { ", below directories of its own." } else { "." }
            return "\(path) belongs to uid \(owner), not to you (uid \(you)): check what it is and who put it there, and move it "
                + "aside; Coffer uses only its own user's files" + below
        case .alreadyExists:
            return "\(path) already exists, and Coffer does not write over it or into it: name one that does not exist yet."
        case .writableWithoutStickyBit:
            return "Run `chmod go-w \(path)`: group or other users can write to it (mode \(octal)) and it has no "
                + "sticky bit, so they could replace what is in it."
        case .readableKeyMaterial:
            return "Run `chmod 600 \(path)`: group or other users can read the key in it (mode \(octal)), so Coffer will not use it."
        case .writableByOthers:
            return "Run `chmod go-w \(path)`: group or other users can write to it (mode \(octal)), so Coffer will not use it."
        }
    }
}
