import Crypto
import CofferStorage
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
        ProcessEnvironment.value("COFFER_CLIPBOARD_CLEAR_SECONDS").flatMap(Int.init).map { max(1, $0) } ?? 30
    }

    /// The tool this session can use: Wayland's when `WAYLAND_DISPLAY` is set and `wl-copy` is
    /// installed, X11's when `DISPLAY` is set, else OSC 52 when there is a terminal.
    static func available() -> Tool? {
        if ProcessEnvironment.value("WAYLAND_DISPLAY")?.isEmpty == false, Subprocess.find("wl-copy") != nil { return .wlCopy }
        if ProcessEnvironment.value("DISPLAY")?.isEmpty == false {
            if Subprocess.find("xclip") != nil { return .xclip }
            if Subprocess.find("xsel") != nil { return .xsel }
        }
        // /dev/tty opens only for a process with a controlling terminal (its mode says nothing).
        let terminal = open("/dev/tty", O_WRONLY | O_CLOEXEC | O_NOCTTY)
        guard terminal != -1 else { return nil }
        close(terminal)
        return .osc52
    }

    /// The tool to copy with, or an error saying there is none. Asked before a code is made, so
    /// that a HOTP counter is not used up for a code that cannot be copied.
    static func tool() throws -> Tool {
        guard let tool = available() else {
            throw CommandFailure("there is no clipboard here: no wl-copy (Wayland), no xclip or xsel (X11), and no terminal for OSC 52")
        }
        return tool
    }

    /// Copies `text` with `tool`. For a program, starts the clearing process.
    static func copy(_ text: String, with tool: Tool) throws {
        guard let (program, arguments) = tool.copy else {
            // ESC ] 52 ; c ; base64 BEL, to the terminal itself (stdout may be a pipe).
            let sequence = "\u{1B}]52;c;\(Data(text.utf8).base64EncodedString())\u{07}"
            guard let terminal = FileHandle(forWritingAtPath: "/dev/tty") else { throw CommandFailure("cannot write to the terminal for OSC 52") }
            try terminal.write(contentsOf: Data(sequence.utf8))
            return
        }
        let status = try Subprocess.run(program, arguments, input: Data(text.utf8))
        guard status == 0 else { throw CommandFailure("\(program) failed (exit status \(status)); nothing was copied") }
        // This very binary (by /proc/self/exe), never a `coffer` looked up by name again.
        guard let binary = Subprocess.runningBinary else { throw CommandFailure("cannot find this program's own file to clear the clipboard later") }
        try Subprocess.detach(binary, ["clipboard-clear", "--tool", tool.rawValue, "--after", String(clearAfter)],
                              environment: ["COFFER_CLIPBOARD_DIGEST": digest(text)])
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
        SHA256.hash(data: Data(text.utf8)).hexString
    }
}
