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
            """,
        aliases: ["mv"])

    @Argument(help: "Which account (must match exactly one).", completion: .custom(AccountCompletion.titles)) var query: String
    @Option(help: "The issuer name to show.") var issuer: String?
    @Option(help: "The account name to show.") var account: String?
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            guard issuer != nil || account != nil else {
                throw CommandFailure.usage("give the new names: --issuer, --account or both (coffer rename --help)")
            }
            let (authenticator, storage) = try options.open()
            let found = try AccountQuery.one(AccountQuery.entries(matching: query, authenticator, storage, whole: options.data.directory),
                                             query: query, unchanged: "nothing was renamed").account
            // The library checks the names, keeps the old ones in the trash and renames in one
            // step of the storage client (a lock or removal meanwhile is neither undone nor brought back).
            let renamed: Account, id: String?
            do {
                (renamed, id) = try await authenticator.rename(found, issuer: issuer, accountName: account)
            } catch AuthenticatorError.invalidName(let reason) {
                throw CommandFailure.usage(reason)  // a name typed on the command line that cannot be used
            } catch AuthenticatorError.notFound {
                throw CommandFailure.noMatch("\(AccountQuery.title(found)) is no longer stored (removed meanwhile); nothing was renamed")
            } catch {
                throw CommandFailure("the account could not be renamed: \((error as? LocalizedError)?.errorDescription ?? "\(error)")",
                                     status: ExitStatus.of(error))
            }
            print("Renamed to \(AccountQuery.title(renamed))." + (id.map { " coffer restore \($0) puts the old names back." } ?? ""))
        }
    }
}
