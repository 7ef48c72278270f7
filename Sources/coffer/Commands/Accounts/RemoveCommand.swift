import ArgumentParser
import CofferAuthenticator
import Foundation

/// `coffer remove`: one account, with everything it owns.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove one account with its mechanisms and notifications.",
        discussion: """
            QUERY must match exactly one account; when it matches several, they are listed and \
            nothing is removed. Asks before removing unless --yes is given.

            Examples:
              coffer remove github
              coffer remove 'Example:alice@example.com' --yes
            """)

    @Argument(help: "Which account.", completion: .custom(AccountCompletion.titles)) var query: String
    @Flag(name: .shortAndLong, help: "Do not ask for confirmation.") var yes = false
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open()
            let matches = try AccountQuery.entries(matching: query, authenticator, storage)
            guard let entry = matches.first else { throw CommandFailure("no account matches '\(query)'; see coffer list") }
            guard matches.count == 1 else {
                let candidates = matches.map { "'\(AccountQuery.title($0.account))'" }.joined(separator: ", ")
                throw CommandFailure("'\(query)' matches \(matches.count) accounts (\(candidates)); name one as issuer:account. Nothing was removed")
            }
            if !yes {
                print("Remove \(AccountQuery.title(entry.account)) and its \(entry.mechanisms.count) mechanism(s)? [y/N] ", terminator: "")
                let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
                guard answer == "y" || answer == "yes" else { throw CommandFailure("nothing was removed") }
            }
            try authenticator.removeAccount(entry.account)
            print("Removed \(AccountQuery.title(entry.account)).")
        }
    }
}

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
            let matches = try AccountQuery.entries(matching: query, authenticator, storage)
            guard matches.count == 1, var renamed = matches.first?.account else {
                throw CommandFailure(matches.isEmpty ? "no account matches '\(query)'" : "'\(query)' matches \(matches.count) accounts; name one as issuer:account")
            }
            if let newIssuer { renamed.displayIssuer = newIssuer == renamed.issuer ? nil : newIssuer }
            if let newAccount { renamed.displayAccountName = newAccount == renamed.accountName ? nil : newAccount }
            guard storage.setAccount(account: renamed) else {
                throw CommandFailure("the account could not be stored: \((storage as? any StorageClientDiagnostics)?.lastError.map { "\($0)" } ?? "unknown error")")
            }
            print("Renamed to \(AccountQuery.title(renamed)).")
        }
    }
}
