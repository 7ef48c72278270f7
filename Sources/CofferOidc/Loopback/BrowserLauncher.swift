import Foundation
import CofferStorage

/// How a sign-in page is opened: the user's browser as Linux desktops name it.
///
/// ``system`` tries each command of `$BROWSER` (colon-separated, as Debian's
/// `sensible-browser` reads it; `%s` in a command stands for the URL, else the URL is added as
/// its last argument), then `xdg-open`. The URL is passed as an argument, never through a
/// shell's parsing. A command that exits with an error within a second counts as not opened.
public struct BrowserLauncher: Sendable {
    private let opener: @Sendable (URL) -> Bool

    /// A launcher that calls `open` and trusts its answer (`true`: a browser is showing the page).
    public init(open: @escaping @Sendable (URL) -> Bool) {
        self.opener = open
    }

    /// Opens `url`; `false` when no browser could be started.
    public func open(_ url: URL) -> Bool { opener(url) }

    /// `$BROWSER`, then `xdg-open`.
    public static let system = BrowserLauncher { url in
        let browsers = (ProcessEnvironment.value("BROWSER") ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        for command in browsers + ["xdg-open"] where start(command, url: url) { return true }
        return false
    }

    /// Never opens anything: the URL is only shown (a headless machine, `--no-browser`).
    public static let none = BrowserLauncher { _ in false }

    /// The `sh -c` script that runs `command` with the URL (`$1`): `%s` stands for it, quoted
    /// already or not ('%s', "%s": the quotes go), else it is added last; it is always one
    /// double-quoted argument, never split or globbed.
    static func shellScript(for command: String) -> String {
        guard command.contains("%s") else { return "exec " + command + " \"$1\"" }
        return "exec " + command.replacingOccurrences(of: "'%s'", with: "%s").replacingOccurrences(of: "\"%s\"", with: "%s")
            .replacingOccurrences(of: "%s", with: "\"$1\"")
    }

    /// Starts `command` with the URL through `sh -c`, the URL as `$1`.
    private static func start(_ command: String, url: URL) -> Bool {
        let script = shellScript(for: command)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "sh", url.absoluteString]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return false
        }
        // A browser keeps running; a launcher (xdg-open) returns at once. Either is a success
        // unless it fails quickly (not found: 127, no handler: non-zero).
        let deadline = Date().addingTimeInterval(1)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        return process.isRunning || process.terminationStatus == 0
    }
}
