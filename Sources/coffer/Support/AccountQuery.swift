import CofferAuthenticator
import CofferStorage
import Foundation

/// Finds accounts by what a person types, the way the tool prints them.
///
/// - `Issuer: account` as `list` and `code` print it, or `Issuer:account`, is an exact match.
///   The printed form splits at its first `: `, so an issuer that itself contains `:` is named
///   exactly: `a:b: c` is issuer `a:b`, account `c` (and `a:b:c` matches both it and `a` /
///   `b:c`).
/// - Anything else matches a part of the issuer or the account name.
/// - Both the names shown (after `coffer rename`) and the names the issuer gave count.
/// - Case, accents and width do not matter: `jurgen` finds `Jürgen`.
enum AccountQuery {
    /// The accounts `query` names, with their mechanisms; only their secrets are read.
    ///
    /// `Issuer:account` typed as the issuer gave it is looked up directly (an indexed lookup
    /// per `:` in the query) without listing every account; anything else lists the accounts
    /// once and matches them here.
    ///
    /// - Parameter whole: For a command that acts on what it found (show, verify, remove,
    ///   rename): the data directory, and then a record among them that could not be read (the
    ///   key not answering, a damaged row) fails the query with why and its exit status, instead
    ///   of the account looking as if it had fewer mechanisms.
    static func entries(matching query: String?, _ authenticator: AuthenticatorClient, _ storage: any StorageClient,
                        whole directory: URL? = nil) throws -> [AccountEntry] {
        let entries: [AccountEntry]
        if let query, let exact = directLookup(query, storage) {
            entries = authenticator.entries(for: [exact])
        } else {
            entries = authenticator.entries(for: matches(query, in: storage.getAllAccounts()))
        }
        try PostgresBackend.requireAnswered(storage)  // a failed read is not "no match"
        if let directory, let unreadable = UnreadableRecords.failure(storage, directory: directory) { throw unreadable }
        return entries
    }

    /// The `Issuer: account` titles that `query` matches as a query would (part of either name,
    /// folded), for completion.
    static func matchingTitles(_ query: String, in titles: [String]) -> [String] {
        let folded = fold(query)
        guard !folded.isEmpty else { return titles }
        return titles.filter { fold($0).contains(folded) }
    }

    /// `entries` by issuer, then account name, as shown (case and accents folded), then by when
    /// they were added: the order `list` and `code` print.
    static func sorted(_ entries: [AccountEntry]) -> [AccountEntry] {
        entries.sorted { a, b in
            let left = (fold(a.account.shownIssuer), fold(a.account.shownAccountName))
            let right = (fold(b.account.shownIssuer), fold(b.account.shownAccountName))
            return left != right ? left < right : a.account.timeAdded < b.account.timeAdded
        }
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
        guard entries.count == 1 else {
            let named = entries.prefix(3).map { "'\(title($0.account))'" }.joined(separator: ", ")
            throw CommandFailure.ambiguous("'\(query ?? "")' matches \(entries.count) accounts (\(named)\(entries.count > 3 ? ", …" : "")); "
                + "name one as it is listed, for example '\(title(first.account))'" + ending)
        }
        return first
    }

    /// The one account whose issuer and account name are `query` split at one of its `:`, as
    /// given (a renamed account's shown names need the listing); `nil` unless exactly one is.
    private static func directLookup(_ query: String, _ storage: any StorageClient) -> Account? {
        let text = query.trimmingCharacters(in: .whitespaces)
        var found: [Account] = []
        for colon in text.indices where text[colon] == ":" {
            let issuer = String(text[..<colon]).trimmingCharacters(in: .whitespaces)
            let name = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            guard !issuer.isEmpty, !name.isEmpty else { continue }
            if let account = storage.getAccount(accountIdentifier: Account.identifier(issuer: issuer, accountName: name)) {
                found.append(account)
            }
        }
        return found.count == 1 ? found[0] : nil
    }

    static func matches(_ query: String?, in accounts: [Account]) -> [Account] {
        guard let query, !query.trimmingCharacters(in: .whitespaces).isEmpty else { return accounts }
        let folded = fold(query)
        let exact = accounts.filter { account in
            [(account.shownIssuer, account.shownAccountName), (account.issuer, account.accountName)].contains { issuer, name in
                // `Issuer: account` as printed splits at the first ": "; without a space, any ':' may.
                folded == fold("\(issuer): \(name)") || (!folded.contains(": ") && folded == fold("\(issuer):\(name)"))
            }
        }
        if !exact.isEmpty { return exact }
        return accounts.filter { account in
            [account.issuer, account.accountName, account.shownIssuer, account.shownAccountName, Self.title(account)]
                .contains { fold($0).contains(folded) }
        }
    }

    /// `Issuer: account`, with the names shown, control characters escaped (names come from a
    /// database that others may write to).
    static func title(_ account: Account) -> String {
        ImportEntry.printable("\(account.shownIssuer): \(account.shownAccountName)")
    }

    /// Case-, accent- and width-insensitive, surrounding whitespace trimmed. ASCII text (most
    /// names) takes a short way: Foundation's folding cost 90% of matching 1,000 accounts.
    private static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            var bytes = Array(text.utf8)
            while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
            let start = bytes.firstIndex { $0 != 0x20 && $0 != 0x09 } ?? bytes.endIndex
            return String(decoding: bytes[start...].map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .trimmingCharacters(in: .whitespaces)
    }
}
