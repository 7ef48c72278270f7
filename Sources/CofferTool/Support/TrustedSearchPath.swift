import CofferStorage
import Foundation

/// The entries of a search path (`PATH`, `LD_LIBRARY_PATH`) the tool may find programs and
/// libraries through: absolute directories that root or you own and nobody else can write to
/// (not even with the sticky bit, as in /tmp, where others can add files), every directory above
/// them checked as ``FileTrust/checkPath(_:)`` checks. An empty or relative entry (the working
/// directory, whatever it is when the tool runs) never qualifies.
enum TrustedSearchPath {
    /// The trusted entries of a colon-separated search path (`PATH`), in their order.
    static func entries(of search: String) -> [String] {
        search.split(separator: ":", omittingEmptySubsequences: false).map(String.init).filter(isTrustedDirectory)
    }

    /// The entries of `LD_LIBRARY_PATH` as the loader reads them: separated by a colon or a
    /// semicolon (glibc's ld.so takes both), empty ones kept.
    static func libraryEntries(of search: String) -> [String] {
        search.split(omittingEmptySubsequences: false, whereSeparator: { $0 == ":" || $0 == ";" }).map(String.init)
    }

    /// Whether `path` is a trusted directory (see the type).
    static func isTrustedDirectory(_ path: String) -> Bool {
        guard path.hasPrefix("/") else { return false }
        var info = stat()
        guard stat(path, &info) == 0, UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFDIR) else { return false }
        return isOwnedAndClosed(info) && (try? FileTrust.checkPath(path)) == true
    }

    /// Whether `path` is an executable regular file that root or you own and nobody else can
    /// write to.
    static func isTrustedExecutable(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && isOwnedClosedFile(info) && access(path, X_OK) == 0
    }

    /// Whether `info` is a regular file's that root or you own and nobody else can write to.
    static func isOwnedClosedFile(_ info: stat) -> Bool {
        UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFREG) && isOwnedAndClosed(info)
    }

    private static func isOwnedAndClosed(_ info: stat) -> Bool {
        (info.st_uid == geteuid() || info.st_uid == 0) && UInt32(info.st_mode) & 0o022 == 0
    }
}
