import CofferAuthenticator
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
    static func entries(matching query: String?, _ authenticator: AuthenticatorClient, _ storage: any StorageClient) -> [AccountEntry] {
        let wanted = Set(matches(query, in: storage.getAllAccounts()).map(\.identifier))
        return authenticator.accounts { wanted.contains($0.identifier) }
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

    /// `Issuer: account`, with the names shown.
    static func title(_ account: Account) -> String {
        "\(account.shownIssuer): \(account.shownAccountName)"
    }

    /// Case-, accent- and width-insensitive, surrounding whitespace trimmed.
    private static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .trimmingCharacters(in: .whitespaces)
    }
}
