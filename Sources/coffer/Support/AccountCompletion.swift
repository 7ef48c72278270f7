import CofferAuthenticator
import Foundation

/// Account names for shell completion (`coffer code <TAB>`).
///
/// Runs inside `coffer` when the shell asks, reading only account rows (no secret is opened),
/// in the data directory and backend the command line names so far. Anything that fails gives
/// no completions rather than an error on the user's prompt.
enum AccountCompletion {
    @Sendable
    static func titles(_ arguments: [String], _ index: Int, _ prefix: String) -> [String] {
        // Only the options that say where accounts are, parsed as the command would parse them.
        var relevant: [String] = []
        for (position, argument) in arguments.enumerated() where position + 1 < arguments.count
            && ["--data-dir", "--backend"].contains(argument) {
            relevant += [argument, arguments[position + 1]]
        }
        guard let options = try? AuthenticatorOptions.parse(relevant) else { return [] }
        guard let (_, storage) = try? options.open() else { return [] }
        return storage.getAllAccounts()
            .map { "\($0.shownIssuer):\($0.shownAccountName)" }
            .filter { prefix.isEmpty || $0.lowercased().hasPrefix(prefix.lowercased()) }
            .sorted()
    }
}
