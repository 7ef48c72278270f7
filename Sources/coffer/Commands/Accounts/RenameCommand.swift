import ArgumentParser
import CofferAuthenticator
import Foundation

/// `coffer rename`: the names shown for an account.
struct RenameCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Change the issuer or account name shown for an account.",
        discussion: """
            The account keeps its identity (what the issuer knows it as); only the names shown \
            change.

            Example:
              coffer rename 'Example: alice@example.com' --issuer 'Example (work)'
            """)

    @Argument(help: "Which account (must match exactly one).", completion: .custom(AccountCompletion.titles)) var query: String
    @Option(help: "The issuer name to show.") var issuer: String?
    @Option(help: "The account name to show.") var account: String?
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            guard issuer != nil || account != nil else { throw CommandFailure("give --issuer, --account or both") }
            let newIssuer = issuer?.trimmingCharacters(in: .whitespaces), newAccount = account?.trimmingCharacters(in: .whitespaces)
            guard newIssuer?.isEmpty != true, newAccount?.isEmpty != true else { throw CommandFailure("a name must not be empty") }
            // As `add` refuses them in a URI: a name is printed, and must not rewrite the terminal.
            for name in [newIssuer, newAccount].compactMap({ $0 }) where name.unicodeScalars.contains(where: MechanismURI.isControl) {
                throw CommandFailure("a name must not contain control characters")
            }
            let (authenticator, storage) = try options.open()
            var renamed = try AccountQuery.one(AccountQuery.entries(matching: query, authenticator, storage, whole: options.data.directory), query: query, unchanged: "nothing was renamed").account
            // One step of the storage client: a lock or removal by another process meanwhile
            // is neither undone nor brought back.
            let before = renamed
            let id = try Trash(storage: storage, dataDirectory: options.data.directory)?.put(before, [], reason: "renamed")
            do {
                renamed = try storage.updateAccount(accountIdentifier: renamed.identifier) { account in
                    if let newIssuer { account.displayIssuer = newIssuer == account.issuer ? nil : newIssuer }
                    if let newAccount { account.displayAccountName = newAccount == account.accountName ? nil : newAccount }
                }
            } catch {
                throw CommandFailure("the account could not be renamed: \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
            }
            print("Renamed to \(AccountQuery.title(renamed))." + (id.map { " coffer restore \($0) puts the old names back." } ?? ""))
        }
    }
}
