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
        // Escaped as everything the tool prints: the shell shows the candidates, and a name with a
        // line feed would be two of them.
        let escaped = titles.map { TerminalText.escaped($0) }
        return AccountQuery.matchingTitles(prefix, in: escaped).sorted()
    }
}
