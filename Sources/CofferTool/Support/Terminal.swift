import Foundation

/// Questions asked of the person at the terminal, through `/dev/tty` itself, so that a pipe on
/// standard input cannot answer for them.
enum Terminal {
    /// Writes `question` to the terminal and returns the answer, trimmed and lower-cased; `nil`
    /// when there is no terminal.
    static func ask(_ question: String) -> String? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd != -1 else { return nil }
        defer { close(fd) }
        _ = question.withCString { write(fd, $0, strlen($0)) }
        var answer = [UInt8]()
        var byte: UInt8 = 0
        while answer.count < 80, read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { answer.append(byte) }
        return String(decoding: answer, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    /// Before a secret goes to standard output: when that is a terminal (someone may be looking)
    /// and `yes` was not given, asks `question` on the terminal itself (standard input may be a
    /// pipe answering for them); anything but yes shows nothing. Into a file or pipe, a script
    /// asked for it: no question.
    static func confirmShowingSecrets(_ question: String, yes: Bool) throws {
        guard !yes, isatty(STDOUT_FILENO) == 1 else { return }
        guard let answer = ask(question) else {
            throw CommandFailure("there is no terminal to ask whether to show it; give --yes")
        }
        guard answer == "y" || answer == "yes" else { throw CommandFailure("nothing was shown") }
    }
}
