#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

extension FileTrust {
    /// The directory part of `path`, as `NSString.deletingLastPathComponent` gives it (`""` for a
    /// bare name, `"/"` for a name in the root), which Foundation on Linux cannot be trusted
    /// with: it traps on a one-character path such as `d`, a name a person may well give.
    public static func parentDirectory(of path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return "" }
        var parent = path[..<slash]
        while parent.count > 1, parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : String(parent)
    }

    /// The most symbolic links followed on one path, as the kernel allows (`ELOOP` past it).
    static let maximumLinks = 40

    /// Walks `path` from `/` the way the kernel resolves it and checks everything on the way,
    /// as OpenSSH checks the directories above `authorized_keys`: each directory must be owned by
    /// you or root and not writable by group or others unless it has the sticky bit (as `/tmp`
    /// does, where others cannot rename or remove what you create); each symbolic link must be
    /// owned by you or root, and what it points to is walked the same way.
    ///
    /// Then no other user can swap any part of the path, which is what makes it safe for Coffer,
    /// and for SQLite, to open files by path after checking them once: another user who owned
    /// (or could write to) a directory above the data directory could otherwise turn it into a
    /// link to a directory of theirs between two opens.
    ///
    /// - Returns: `true` when the whole path exists; `false` when a component is missing (what
    ///   exists of it has been checked).
    @discardableResult
    public static func checkPath(_ path: String) throws(StorageError) -> Bool {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var pending = Array(absolute.split(separator: "/").map(String.init).reversed())
        var resolved = ""  // "" is the root directory
        var links = 0
        try checkOnTheWay("/")
        while let name = pending.popLast() {
            if name == "." { continue }
            if name == ".." {
                // Every ancestor of `resolved` was checked on the way down to it.
                resolved = parentDirectory(of: resolved)
                if resolved == "/" { resolved = "" }
                continue
            }
            let next = resolved + "/" + name
            var info = stat()
            guard lstat(next, &info) == 0 else {
                if errno == ENOENT { return false }
                throw .io(operation: "inspect", path: next, code: errno)
            }
            let type = UInt32(info.st_mode) & UInt32(S_IFMT)
            if type == UInt32(S_IFLNK) {
                try checkOwner(info, path: next, onTheWayTo: path, link: true)
                links += 1
                guard links <= maximumLinks, let target = try? FileManager.default.destinationOfSymbolicLink(atPath: next) else {
                    throw .io(operation: "follow the links of", path: path, code: ELOOP)
                }
                if target.hasPrefix("/") { resolved = "" }
                pending += target.split(separator: "/").map(String.init).reversed()
                continue
            }
            guard type == UInt32(S_IFDIR) else {
                // Only the last component may be something else; the caller says what it needs.
                if pending.isEmpty { return true }
                throw .untrusted(path: next, owner: UInt32(info.st_uid), mode: UInt32(info.st_mode) & 0o7777,
                                 reason: .notADirectoryOnTheWay(to: path))
            }
            try checkOnTheWay(next)
            resolved = next
        }
        return true
    }

    /// Checks a directory Coffer passes through or creates something in (see ``checkPath(_:)``).
    private static func checkOnTheWay(_ path: String) throws(StorageError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .io(operation: "inspect", path: path, code: errno) }
        try checkOwner(info, path: path, onTheWayTo: path, link: false)
        let mode = UInt32(info.st_mode)
        if mode & 0o022 != 0, mode & UInt32(S_ISVTX) == 0 {
            throw .untrusted(path: path, owner: UInt32(info.st_uid), mode: mode & 0o7777,
                             reason: .writableWithoutStickyBit)
        }
    }

    /// Refuses a link or directory on the way to `target` that belongs to another user (not root).
    private static func checkOwner(_ info: stat, path: String, onTheWayTo target: String, link: Bool) throws(StorageError) {
        let owner = UInt32(info.st_uid), me = UInt32(geteuid())
        guard owner == me || owner == 0 else {
            throw .untrusted(path: path, owner: owner, mode: UInt32(info.st_mode) & 0o7777,
                             reason: link ? .foreignLinkOnTheWay(to: target, owner: owner, you: me) : .foreignDirectoryOnTheWay(owner: owner, you: me))
        }
    }
}
