import Foundation

/// Where Coffer keeps its files when you do not say otherwise.
public enum DataDirectory {
    /// `$XDG_DATA_HOME/coffer` when `XDG_DATA_HOME` is set to an absolute path, else
    /// `~/.local/share/coffer` (the XDG Base Directory default).
    public static var `default`: URL {
        if let xdg = ProcessEnvironment.value("XDG_DATA_HOME"), xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("coffer", isDirectory: true)
        }
        let home = ProcessEnvironment.value("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".local/share/coffer", isDirectory: true)
    }

    /// Where Coffer keeps the locks of what is shared by every process of one user rather than
    /// kept in a file: the OS keyring's items and keys (the Secret Service answers every shell
    /// of the user alike). `coffer/locks` under `.local/share` in your home directory **as the
    /// password database names it** (`getpwuid(geteuid())`), whatever `HOME`,
    /// `XDG_RUNTIME_DIR`, `XDG_DATA_HOME` or the working directory say: a desktop terminal and
    /// an `su`, `ssh` or cron shell of the same user, with other environments, lock the same
    /// file, so the lock follows what it protects. Never a shared directory such as `/tmp`,
    /// where another user could create the lock first, hold it, or plant links. The directory
    /// is created 0700 and checked (``FileTrust``) before use.
    ///
    /// - Throws: ``StorageError`` when the password database has no home for you, or it
    ///   cannot be used (another owner, writable by others).
    public static func locks() throws(StorageError) -> URL {
        let directory = try accountHome().appendingPathComponent(".local/share/coffer/locks", isDirectory: true)
        try FileTrust.prepareDirectory(directory)
        return directory
    }

    /// The effective user's home directory from the password database, never from the
    /// environment.
    static func accountHome() throws(StorageError) -> URL {
        let uid = geteuid()
        guard let entry = getpwuid(uid), let home = entry.pointee.pw_dir, home.pointee == UInt8(ascii: "/") else {
            // Coffer keeps the keyring's lock there, as the keyring keeps its own files.
            throw .io(operation: "find in the password database the home directory of", path: "uid \(uid)", code: ENOENT)
        }
        return URL(fileURLWithPath: String(cString: home), isDirectory: true)
    }
}

/// Checks that a name can be a file of its own inside a storage directory.
enum FileName {
    static func validate(_ name: String) -> StorageError? {
        func invalid(_ reason: String) -> StorageError { .invalidName(name, reason: reason) }
        if name.isEmpty { return invalid("it is empty") }
        // Byte searches: String.contains(String) is Foundation's text search, which cost more
        // than the read it guards (docs/performance.md, P3).
        if name.utf8.contains(UInt8(ascii: "/")) { return invalid("it contains '/'; pass the folder as `directory` instead") }
        if name.utf8.contains(0) { return invalid("it contains a NUL character") }
        if name.hasPrefix(".") { return invalid("it starts with '.', which Coffer keeps for its lock and temporary files") }
        if name.utf8.count > 200 { return invalid("it is longer than 200 bytes") }
        return nil
    }
}
