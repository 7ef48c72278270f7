import CofferAuthenticator
import CofferStorage
import Foundation

/// Account names for shell completion (`coffer code <TAB>`), matched as queries are: part of the
/// issuer or account name, case and accents folded (`git<TAB>` offers `GitHub: alice`).
///
/// Runs inside `coffer` when the shell asks. It reads only the account names from the database
/// in the data directory the command line names so far (no key, no keyring, nothing created:
/// pressing Tab must not make a store appear); the keyring backend offers none, since its
/// names are sealed. Anything that fails gives no completions rather than an error.
enum AccountCompletion {
    @Sendable
    static func titles(_ arguments: [String], _ index: Int, _ prefix: String) -> [String] {
        var relevant: [String] = []
        for (position, argument) in arguments.enumerated() where position + 1 < arguments.count
            && ["--data-dir", "--backend"].contains(argument) {
            relevant += [argument, arguments[position + 1]]
        }
        guard let options = try? AuthenticatorOptions.parse(relevant), (try? options.backend()) == .sqlite,
              let titles = try? SQLiteStorageClient.accountTitles(inDatabaseAt: DefaultAuthenticatorStorage.databaseURL(in: options.data.directory).path)
        else { return [] }
        // A name with characters the tool escapes (a line feed, ESC: only a crafted database
        // holds one) cannot be typed, so it is not offered.
        let typable = titles.filter { TerminalText.escaped($0) == $0 }
        return withSharedPart(AccountSearch.matchingTitles(prefix, in: typable).sorted())
    }

    /// `matches`, and what they all begin with when the next character of each is one the shell
    /// quotes with a backslash (`Evil:x$…`, `Evil:x;…`): bash and zsh would put in the common
    /// part of the quoted names, `Evil:x\`, whose lone backslash joins the next line. Offering
    /// `Evil:x` itself stops the common part before it.
    static func withSharedPart(_ matches: [String]) -> [String] {
        guard matches.count > 1, var shared = matches.first else { return matches }
        for match in matches.dropFirst() {
            shared = String(zip(shared, match).prefix { $0 == $1 }.map(\.0))
        }
        let quoted = { (next: Character) in !(next.isLetter || next.isNumber || "_@%+=:,./-".contains(next)) }
        let nextCharacters = matches.compactMap { $0.dropFirst(shared.count).first }
        guard !shared.isEmpty, !matches.contains(shared), !nextCharacters.isEmpty, nextCharacters.allSatisfy(quoted) else { return matches }
        return [shared] + matches
    }
}
