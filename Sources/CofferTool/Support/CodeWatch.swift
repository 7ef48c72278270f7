import CProcessHardening
import CofferAuthenticator
import Foundation

/// `coffer code --watch`: the codes, redrawn every second with a countdown bar, until Ctrl-C.
///
/// Only TOTP and Steam codes are shown: a HOTP code uses up its counter, so watching never
/// issues one. Codes are computed here from the secrets read once at the start; a locked
/// account shows no code. At a terminal the block is redrawn in place with the cursor hidden
/// (shown again on Ctrl-C or SIGTERM); otherwise a new block is printed when the codes change.
enum CodeWatch {
    static let barWidth = 20

    static func run(_ entries: [AccountEntry], showNext: Bool) throws -> Never {
        let terminal = isatty(STDOUT_FILENO) == 1
        if terminal {
            StandardStreams.control("\u{1B}[?25l")  // hide the cursor; a crash shows it again
            coffer_crash_restores_cursor(1)
            let restore: @convention(c) (Int32) -> Void = { signal in
                let show = "\u{1B}[?25h\n"
                _ = show.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
                _exit(signal == SIGINT ? 0 : 128 + signal)
            }
            signal(SIGINT, restore)
            signal(SIGTERM, restore)
        }
        var drawn = 0
        var previous: [String] = []
        while true {
            let now = Date()
            let lines = try block(entries, at: now, showNext: showNext)
            if terminal {
                // Back to the top of the previous block, then draw over it.
                if drawn > 0 { StandardStreams.control("\u{1B}[\(drawn)F") }
                for line in lines {
                    StandardStreams.control("\u{1B}[2K")
                    print(line)
                }
                drawn = lines.count
            } else if lines.map(Self.withoutBar) != previous.map(Self.withoutBar) {
                for line in lines { print(line) }
                print("")
            }
            previous = lines
            try StandardStreams.flushOutput()
            // Wake at the next whole second.
            let fraction = now.timeIntervalSince1970 - floor(now.timeIntervalSince1970)
            usleep(useconds_t((1 - fraction) * 1_000_000))
        }
    }

    /// One line per code: title, code, (next code,) bar and seconds left.
    static func block(_ entries: [AccountEntry], at now: Date, showNext: Bool) throws -> [String] {
        var lines: [String] = []
        for entry in entries {
            let title = AccountQuery.title(entry.account)
            for mechanism in entry.mechanisms where mechanism.type.generatesCodes {
                guard mechanism.type != .hotp else {
                    lines.append("\(title)  HOTP (coffer code '\(title)' issues the next code)")
                    continue
                }
                guard !entry.account.isLocked else {
                    lines.append("\(title)  locked")
                    continue
                }
                let secret = try Base32.decode(mechanism.secret)
                let current = try code(mechanism, secret, at: now)
                let left = current.secondsRemaining(at: now) ?? 0
                let filled = barWidth * left / max(1, mechanism.period)
                var line = "\(title)  \(current.code)"
                if showNext, let end = current.validUntil { line += "  next \(try code(mechanism, secret, at: end).code)" }
                line += "  [" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "] \(left)s"
                lines.append(line)
            }
        }
        return lines
    }

    /// The current TOTP or Steam code of `mechanism` (never HOTP: that moves a counter).
    static func code(_ mechanism: Mechanism, at date: Date) throws -> OathCode {
        try code(mechanism, Base32.decode(mechanism.secret), at: date)
    }

    private static func code(_ mechanism: Mechanism, _ secret: Data, at date: Date) throws -> OathCode {
        mechanism.type == .steam
            ? try OathGenerator.steam(secret: secret, at: date)
            : try OathGenerator.totp(secret: secret, at: date, period: mechanism.period, digits: mechanism.digits, algorithm: mechanism.algorithm)
    }

    private static func withoutBar(_ line: String) -> String {
        line.components(separatedBy: "  [").first ?? line
    }
}
