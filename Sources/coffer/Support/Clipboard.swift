import Crypto
import Foundation

/// Puts text on the clipboard with whatever the desktop has: `wl-copy` on Wayland, `xclip` or
/// `xsel` on X11, and, with none of them (over SSH), the terminal's OSC 52 escape sequence.
/// A tool-set clipboard is cleared after a while by a detached `coffer clipboard-clear`,
/// unless it holds something else by then.
enum Clipboard {
    /// A way to reach the clipboard.
    enum Tool: String, CaseIterable, Sendable {
        case wlCopy = "wl-copy"
        case xclip
        case xsel
        /// The terminal's OSC 52 sequence: no program needed, nothing to clear it with.
        case osc52 = "OSC 52"

        /// Arguments that copy standard input, read the clipboard, and clear it.
        var copy: (String, [String])? {
            switch self {
            case .wlCopy: ("wl-copy", [])
            case .xclip: ("xclip", ["-selection", "clipboard", "-in"])
            case .xsel: ("xsel", ["--clipboard", "--input"])
            case .osc52: nil
            }
        }

        var paste: (String, [String])? {
            switch self {
            case .wlCopy: ("wl-paste", ["--no-newline"])
            case .xclip: ("xclip", ["-selection", "clipboard", "-out"])
            case .xsel: ("xsel", ["--clipboard", "--output"])
            case .osc52: nil
            }
        }
    }

    /// How long a copied code stays, in seconds (`COFFER_CLIPBOARD_CLEAR_SECONDS`, default 30).
    static var clearAfter: Int {
        ProcessInfo.processInfo.environment["COFFER_CLIPBOARD_CLEAR_SECONDS"].flatMap(Int.init).map { max(1, $0) } ?? 30
    }

    /// The tool this session can use: Wayland's when `WAYLAND_DISPLAY` is set and `wl-copy` is
    /// installed, X11's when `DISPLAY` is set, else OSC 52 when there is a terminal.
    static func available() -> Tool? {
        let environment = ProcessInfo.processInfo.environment
        if environment["WAYLAND_DISPLAY"]?.isEmpty == false, Subprocess.find("wl-copy") != nil { return .wlCopy }
        if environment["DISPLAY"]?.isEmpty == false {
            if Subprocess.find("xclip") != nil { return .xclip }
            if Subprocess.find("xsel") != nil { return .xsel }
        }
        return isatty(STDERR_FILENO) == 1 || FileManager.default.isWritableFile(atPath: "/dev/tty") ? .osc52 : nil
    }

    /// Copies `text` and returns what was used. For a tool, starts the clearing process.
    static func copy(_ text: String) throws -> Tool {
        guard let tool = available() else {
            throw CommandFailure("there is no clipboard here: no wl-copy (Wayland), no xclip or xsel (X11), and no terminal for OSC 52")
        }
        guard let (program, arguments) = tool.copy else {
            // ESC ] 52 ; c ; base64 BEL, to the terminal itself (stdout may be a pipe).
            let sequence = "\u{1B}]52;c;\(Data(text.utf8).base64EncodedString())\u{07}"
            guard let terminal = FileHandle(forWritingAtPath: "/dev/tty") else { throw CommandFailure("cannot write to the terminal for OSC 52") }
            try terminal.write(contentsOf: Data(sequence.utf8))
            return tool
        }
        let status = try Subprocess.run(program, arguments, input: Data(text.utf8))
        guard status == 0 else { throw CommandFailure("\(program) failed (exit status \(status)); nothing was copied") }
        try Subprocess.detach(CommandLine.arguments[0], ["clipboard-clear", "--tool", tool.rawValue, "--after", String(clearAfter)],
                              environment: ["COFFER_CLIPBOARD_DIGEST": digest(text)])
        return tool
    }

    /// Clears the clipboard if it still holds the text whose digest is given.
    static func clear(_ tool: Tool, ifDigest expected: String) throws {
        guard let (program, arguments) = tool.paste, let (copier, copyArguments) = tool.copy else { return }
        let current = try Subprocess.output(program, arguments)
        guard digest(String(decoding: current, as: UTF8.self)) == expected else { return }
        _ = try Subprocess.run(copier, copyArguments, input: Data())
    }

    /// SHA-256 of `text`: the clearing process learns what to look for without the code itself.
    static func digest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
