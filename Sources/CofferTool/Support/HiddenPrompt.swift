import Foundation

/// Reads a secret from the terminal with echo off, and puts the terminal back however the
/// prompt ends: Enter, end of input, or Ctrl-C / SIGTERM (a handler restores the saved settings,
/// then lets the signal end the process as it would have).
enum HiddenPrompt {
    /// The terminal settings to restore from a signal handler; written before echo goes off.
    nonisolated(unsafe) private static var saved = termios()

    /// Shows `text` on stderr and reads one line from standard input without echoing it.
    static func read(_ text: String) throws -> String {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
        tcgetattr(STDIN_FILENO, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        let restore: @convention(c) (Int32) -> Void = { signal in
            tcsetattr(STDIN_FILENO, TCSANOW, &HiddenPrompt.saved)
            Glibc.signal(signal, SIG_DFL)
            raise(signal)
        }
        let previousInterrupt = signal(SIGINT, restore)
        let previousTerminate = signal(SIGTERM, restore)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            signal(SIGINT, previousInterrupt)
            signal(SIGTERM, previousTerminate)
            try? FileHandle.standardError.write(contentsOf: Data("\n".utf8))
        }
        guard let line = readLine(strippingNewline: true) else { throw CommandFailure("nothing was entered") }
        return line
    }
}
