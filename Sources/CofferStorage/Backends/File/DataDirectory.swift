import Foundation

/// Where Coffer keeps its files when you do not say otherwise.
public enum DataDirectory {
    /// `$XDG_DATA_HOME/coffer` when `XDG_DATA_HOME` is set to an absolute path, else
    /// `~/.local/share/coffer` (the XDG Base Directory default).
    public static var `default`: URL {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("coffer", isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".local/share/coffer", isDirectory: true)
    }

    /// Where Coffer keeps lock files that are not beside a data file: `$XDG_RUNTIME_DIR/coffer`
    /// when `XDG_RUNTIME_DIR` is set to an absolute path, else ``default``. Never a shared
    /// directory such as `/tmp`, where another user could create the lock first, hold it, or
    /// plant links. The directory is created 0700 and checked (``FileTrust``) before use, and so
    /// is `XDG_RUNTIME_DIR` itself.
    public static func locks() throws(StorageError) -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            let base = URL(fileURLWithPath: runtime, isDirectory: true)
            if try FileTrust.checkExistingDirectory(base.path) {
                let directory = base.appendingPathComponent("coffer", isDirectory: true)
                try FileTrust.prepareDirectory(directory)
                return directory
            }
        }
        try FileTrust.prepareDirectory(Self.default)
        return Self.default
    }
}

/// Checks that a name can be a file of its own inside a storage directory.
enum FileName {
    static func validate(_ name: String) -> StorageError? {
        func invalid(_ reason: String) -> StorageError { .invalidName(name, reason: reason) }
        if name.isEmpty { return invalid("it is empty") }
        if name.contains("/") { return invalid("it contains '/'; pass the folder as `directory` instead") }
        if name.contains("\0") { return invalid("it contains a NUL character") }
        if name.hasPrefix(".") { return invalid("it starts with '.', which Coffer keeps for its lock and temporary files") }
        if name.utf8.count > 200 { return invalid("it is longer than 200 bytes") }
        return nil
    }
}
