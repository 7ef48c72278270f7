import CofferAuthenticator
import CofferStorage
import Foundation

/// The tool's side of finding accounts: the library's `AccountSearch` matches; this adds the
/// checks a command needs (the store answered, nothing unreadable), the one-account rule with its
/// exit statuses, and the printing of titles and columns.
enum AccountQuery {
    /// The accounts `query` names (the library's `AccountSearch`), with their mechanisms.
    ///
    /// - Parameter whole: For a command that acts on what it found (show, verify, remove,
    ///   rename): the data directory, and then a record among them that could not be read (the
    ///   key not answering, a damaged row) fails the query with why and its exit status, instead
    ///   of the account looking as if it had fewer mechanisms.
    static func entries(matching query: String?, _ authenticator: AuthenticatorClient, _ storage: any StorageClient,
                        whole directory: URL? = nil) throws -> [AccountEntry] {
        let entries = authenticator.entries(matching: query)
        try PostgresBackend.requireAnswered(storage)  // a failed read is not "no match"
        if let directory, let unreadable = UnreadableRecords.failure(storage, directory: directory) { throw unreadable }
        return entries
    }

    /// `rows` of cells as columns: each cell but the last padded to its column's width, two
    /// spaces apart, when standard output is a terminal; else joined by two spaces (what
    /// scripts split on).
    static func columns(_ rows: [[String]], indent: String = "") -> [String] {
        guard isatty(STDOUT_FILENO) == 1 else { return rows.map { indent + $0.joined(separator: "  ") } }
        // Widths as printed: what print escapes takes the room of its escape.
        func width(_ cell: String) -> Int { TerminalText.escaped(cell).count }
        let count = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], width(cell)) }
        }
        return rows.map { row in
            var cells: [String] = []
            for (column, cell) in row.enumerated() {
                let padding = column == row.count - 1 ? 0 : max(0, widths[column] - width(cell))
                cells.append(cell + String(repeating: " ", count: padding))
            }
            return indent + cells.joined(separator: "  ")
        }
    }

    /// The one account of `entries` (what `query` matched): ``ExitStatus/noMatch`` when there is
    /// none, ``ExitStatus/ambiguous`` (naming up to three) when there are several.
    /// `unchanged` ("nothing was removed") ends either message, for commands that change data.
    static func one(_ entries: [AccountEntry], query: String?, unchanged: String? = nil) throws -> AccountEntry {
        let ending = unchanged.map { "; \($0)" } ?? ""
        guard let first = entries.first else {
            throw CommandFailure.noMatch("no account matches '\(query ?? "")'; see coffer list" + ending)
        }
        if entries.count > 1, let chosen = try choose(among: entries, query: query, ending: ending) { return chosen }
        guard entries.count == 1 else {
            let named = entries.prefix(3).map { "'\(title($0.account))'" }.joined(separator: ", ")
            throw CommandFailure.ambiguous("'\(query ?? "")' matches \(entries.count) accounts (\(named)\(entries.count > 3 ? ", …" : "")); "
                + "name one as it is listed, for example '\(title(first.account))'" + ending)
        }
        return first
    }

    /// The most accounts a numbered choice offers.
    static let choiceLimit = 9

    /// At a terminal (standard input and output both one), a numbered choice among `entries`,
    /// asked on the terminal itself; `nil` elsewhere (scripts keep the exit status 3) or when
    /// there are more than ``choiceLimit``. Anything but a listed number chooses none (exit 3).
    private static func choose(among entries: [AccountEntry], query: String?, ending: String) throws -> AccountEntry? {
        guard entries.count <= choiceLimit, isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { return nil }
        let sorted = AccountSearch.sorted(entries)
        var question = "'\(TerminalText.escaped(query ?? ""))' matches \(entries.count) accounts:\n"
        for (number, entry) in sorted.enumerated() {
            let kinds = entry.mechanisms.map { $0.type.rawValue.uppercased() }.joined(separator: ", ")
            question += "  \(number + 1)  \(title(entry.account))  \(kinds)  added \(entry.account.timeAdded.formatted(date: .abbreviated, time: .omitted))\n"
        }
        question += "Which one? [1-\(entries.count), Enter for none] "
        guard let answer = Terminal.ask(question) else { return nil }
        guard let number = Int(answer), (1...sorted.count).contains(number) else {
            throw CommandFailure.ambiguous("no account was chosen" + ending)
        }
        return sorted[number - 1]
    }

    /// `Issuer: account`, with the names shown, control characters escaped (names come from a
    /// database that others may write to).
    static func title(_ account: Account) -> String {
        ImportEntry.printable("\(account.shownIssuer): \(account.shownAccountName)")
    }
}
