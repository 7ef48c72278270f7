import Foundation

/// Finds accounts by what a person types, the way they are printed (`Issuer: account`).
///
/// - `Issuer: account` as printed, or `Issuer:account`, is an exact match. The printed form
///   splits at its first `: `, so an issuer that itself contains `:` is named exactly: `a:b: c`
///   is issuer `a:b`, account `c` (and `a:b:c` matches both it and `a` / `b:c`).
/// - Else a whole issuer or a whole account name wins: `google` finds `Google` and not
///   `Google Cloud`, as gopass prefers an exact name.
/// - Anything else matches a part of the issuer or the account name.
/// - Both the names shown (after a rename) and the names the issuer gave count.
/// - Case, accents and width do not matter: `jurgen` finds `Jürgen`.
///
/// ```swift
/// let found = client.entries(matching: "github")   // every account whose names contain it
/// let exact = client.entries(matching: "GitHub: alice")
/// ```
public enum AccountSearch {
    /// The accounts among `accounts` that `query` names (all of them for `nil` or blank).
    public static func matches(_ query: String?, in accounts: [Account]) -> [Account] {
        matching(query, in: accounts) { AccountNames($0) }
    }

    /// The names among `names` that `query` names (all of them for `nil` or blank): the same
    /// rules, for ``StorageClient/getAllAccountNames()``.
    public static func matches(_ query: String?, in names: [AccountNames]) -> [AccountNames] {
        matching(query, in: names) { $0 }
    }

    private static func matching<Listed>(_ query: String?, in listed: [Listed], names: (Listed) -> AccountNames) -> [Listed] {
        guard let query, !query.trimmingCharacters(in: .whitespaces).isEmpty else { return listed }
        let folded = FoldedQuery(fold(query))
        // Once, not per account: String.contains(String) is Foundation's text search.
        let spaced = folded.text.contains(": ")
        let all = listed.map(names)
        // `Issuer: account` as printed splits at the first ": "; without a space, any ':' may.
        func printed(_ issuer: String, _ name: String) -> Bool {
            folded.equalsFolded(issuer, ": ", name) || (!spaced && folded.equalsFolded(issuer, ":", name))
        }
        let exact = all.indices.filter { index in
            let account = all[index]
            return printed(account.shownIssuer, account.shownAccountName) || printed(account.issuer, account.accountName)
        }
        if !exact.isEmpty { return exact.map { listed[$0] } }
        let whole = all.indices.filter { index in
            let account = all[index]
            return [account.issuer, account.accountName, account.shownIssuer, account.shownAccountName].contains { folded.equalsFolded($0) }
        }
        if !whole.isEmpty { return whole.map { listed[$0] } }
        return all.indices.filter { index in
            let account = all[index]
            return [account.issuer, account.accountName, account.shownIssuer, account.shownAccountName, "\(account.shownIssuer): \(account.shownAccountName)"]
                .contains { fold($0).contains(folded.text) }
        }.map { listed[$0] }
    }

    /// The identifiers `query` may name exactly, split at each of its `:` (`Issuer:account` as
    /// the issuer gave it), for a direct lookup without listing every account.
    public static func candidateIdentifiers(_ query: String) -> [String] {
        let text = query.trimmingCharacters(in: .whitespaces)
        var identifiers: [String] = []
        for colon in text.indices where text[colon] == ":" {
            let issuer = String(text[..<colon]).trimmingCharacters(in: .whitespaces)
            let name = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            guard !issuer.isEmpty, !name.isEmpty else { continue }
            identifiers.append(Account.identifier(issuer: issuer, accountName: name))
        }
        return identifiers
    }

    /// The titles among `titles` that `query` matches as a query would (part of either name,
    /// folded), for completion.
    public static func matchingTitles(_ query: String, in titles: [String]) -> [String] {
        let folded = fold(query)
        guard !folded.isEmpty else { return titles }
        return titles.filter { fold($0).contains(folded) }
    }

    /// `entries` by issuer, then account name, as shown (case and accents folded), then by when
    /// they were added: the order a listing prints.
    public static func sorted(_ entries: [AccountEntry]) -> [AccountEntry] {
        entries.sorted { a, b in
            let left = (fold(a.account.shownIssuer), fold(a.account.shownAccountName))
            let right = (fold(b.account.shownIssuer), fold(b.account.shownAccountName))
            return left != right ? left < right : a.account.timeAdded < b.account.timeAdded
        }
    }

    /// How an account listed as `issuer: name` is told apart by queries: both names folded
    /// (``fold(_:)``). Two accounts with one key could not be named apart.
    static func listingKey(issuer: String, name: String) -> String {
        fold(issuer) + "\u{0}" + fold(name)
    }

    /// Case-, accent- and width-insensitive, surrounding whitespace trimmed. ASCII text (most
    /// names) takes a short way, written byte by byte into the new string: Foundation's
    /// folding cost 90% of matching 1,000 accounts.
    static func fold(_ text: String) -> String {
        var text = text
        let ascii = text.withUTF8 { bytes -> String? in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
            var start = 0
            var end = bytes.count
            while start < end, isASCIIBlank(bytes[start]) { start += 1 }
            while end > start, isASCIIBlank(bytes[end - 1]) { end -= 1 }
            return String(unsafeUninitializedCapacity: end - start) { folded in
                for offset in 0..<(end - start) { folded[offset] = asciiLowercased(bytes[start + offset]) }
                return end - start
            }
        }
        if let ascii { return ascii }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .trimmingCharacters(in: .whitespaces)
    }

    /// What ``fold(_:)`` trims from ASCII text: spaces and tabs.
    private static func isASCIIBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// An ASCII byte as ``fold(_:)`` folds it: upper-case letters lowered.
    private static func asciiLowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }

    /// A folded query, compared with folded names without building them: matching 1,000
    /// accounts built and folded four strings for each, a seventh of a `coffer code`.
    struct FoldedQuery {
        let text: String
        /// `text`'s bytes when it is ASCII (else every comparison folds as ``fold(_:)`` does).
        private let ascii: [UInt8]?

        init(_ text: String) {
            self.text = text
            ascii = text.utf8.allSatisfy { $0 < 0x80 } ? Array(text.utf8) : nil
        }

        /// Whether `fold(first + middle + last)` is this query.
        func equalsFolded(_ first: String, _ middle: String = "", _ last: String = "") -> Bool {
            if let ascii, let equal = Self.asciiFoldedEquals(ascii, first, middle, last) { return equal }
            return text == fold(first + middle + last)
        }

        /// ``fold(_:)``'s ASCII way, byte by byte over the three parts as one text: `nil` when a
        /// part is not ASCII.
        private static func asciiFoldedEquals(_ query: [UInt8], _ first: String, _ middle: String, _ last: String) -> Bool? {
            var (first, middle, last) = (first, middle, last)
            return first.withUTF8 { a in
                middle.withUTF8 { b in
                    last.withUTF8 { c -> Bool? in
                        guard !a.contains(where: { $0 >= 0x80 }), !b.contains(where: { $0 >= 0x80 }),
                              !c.contains(where: { $0 >= 0x80 }) else { return nil }
                        func byte(_ index: Int) -> UInt8 {
                            index < a.count ? a[index] : index < a.count + b.count ? b[index - a.count] : c[index - a.count - b.count]
                        }
                        var start = 0
                        var end = a.count + b.count + c.count
                        while start < end, isASCIIBlank(byte(start)) { start += 1 }
                        while end > start, isASCIIBlank(byte(end - 1)) { end -= 1 }
                        guard end - start == query.count else { return false }
                        return (0..<query.count).allSatisfy { asciiLowercased(byte(start + $0)) == query[$0] }
                    }
                }
            }
        }
    }
}

extension AuthenticatorClient {
    /// The accounts `query` names (``AccountSearch``), with their mechanisms and notifications;
    /// every account for `nil`.
    ///
    /// Every account's names are compared, even for `Issuer:account` typed as the issuer gave
    /// it: another account renamed to be shown alike must make the query ambiguous, never be
    /// passed over. Only the names are read for that (``StorageClient/getAllAccountNames()``);
    /// the accounts named are then read whole.
    public func entries(matching query: String?) -> [AccountEntry] {
        guard let query, !query.trimmingCharacters(in: .whitespaces).isEmpty else { return entries(for: allAccounts()) }
        let named = AccountSearch.matches(query, in: allAccountNames())
        // An account removed since its names were read is not found, as if read a moment later.
        return entries(for: named.compactMap { account(storedAs: $0.identifier) })
    }

    /// The stored account, other than `except`, that is listed as `issuer: accountName` (by the
    /// names it shows or the ones its issuer gave, case, accents and width folded as queries
    /// fold them), if any: a new or renamed account must not be listed alike.
    ///
    /// Decided on names: an account listed alike that cannot be read whole (a damaged row)
    /// still takes its names, but is not returned; another one listed alike that reads is.
    public func accountListed(asIssuer issuer: String, accountName: String, except: Account? = nil) -> Account? {
        Self.allListedAlike(issuer: issuer, accountName: accountName, except: except?.identifier, in: allAccountNames())
            .compactMap { self.account(storedAs: $0.identifier) }.first
    }

    /// The names of the stored account, other than `except`, listed as `issuer: accountName`
    /// (see ``accountListed(asIssuer:accountName:except:)``), read or not: what a rename or a
    /// restore must not take.
    func namesListed(asIssuer issuer: String, accountName: String, except: Account?) -> AccountNames? {
        Self.listedAlike(issuer: issuer, accountName: accountName, except: except?.identifier, in: allAccountNames())
    }
}
