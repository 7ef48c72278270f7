import ArgumentParser

/// What to say when the first argument is not a command: the nearest command, when one is near.
enum CommandSuggestion {
    /// Words other tools use for a command, and coffer's command for each (pass's `ls`, `rm`,
    /// `mv` and `otp` are aliases; these are only suggested).
    static let otherToolsWords = ["insert": "add", "find": "list", "search": "list", "grep": "list", "delete": "remove",
                                  "del": "remove", "move": "rename", "totp": "code", "hotp": "code", "get": "code"]

    /// A one-line message for `typed`, or `nil` when it is a command (or an option).
    static func message(for typed: String, commands: [String]) -> String? {
        guard !typed.hasPrefix("-"), !commands.contains(typed) else { return nil }
        if let command = otherToolsWords[typed.lowercased()] {
            return "'\(typed)' is not a coffer command. Did you mean '\(command)'? (coffer --help lists them all)"
        }
        let nearest = commands.map { ($0, distance(typed.lowercased(), $0)) }.min { $0.1 < $1.1 }
        if let (command, distance) = nearest, distance <= max(1, command.count / 3) || command.hasPrefix(typed.lowercased()) {
            return "'\(typed)' is not a coffer command. Did you mean '\(command)'? (coffer --help lists them all)"
        }
        return "'\(typed)' is not a coffer command; coffer --help lists them all"
    }

    /// Edit distance (insertions, deletions, substitutions, and swaps of neighbours).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1) }
            }
        }
        return rows[a.count][b.count]
    }
}
