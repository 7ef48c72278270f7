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
            nothing is removed. Asks before removing unless --yes is given. The account goes to \
            the trash for 30 days: coffer trash lists it, coffer restore brings it back.

            Examples:
              coffer remove github
              coffer remove 'Example:alice@example.com' --yes
            """,
        aliases: ["rm"])

    @Argument(help: "Which account.", completion: .custom(AccountCompletion.titles)) var query: String
    @Flag(name: [.short, .long, .customShort("f")], help: "Do not ask for confirmation (-f as in pass rm -f).") var yes = false
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open()
            let entry = try AccountQuery.one(AccountQuery.entries(matching: query, authenticator, storage, whole: options.data.directory), query: query, unchanged: "nothing was removed")
            if !yes {
                print("Remove \(AccountQuery.title(entry.account)) and its \(entry.mechanisms.count) mechanism(s)? [y/N] ", terminator: "")
                let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
                guard answer == "y" || answer == "yes" else { throw CommandFailure("nothing was removed") }
            }
            // The library keeps it in the trash first, then takes each mechanism out as it is.
            let id = try await authenticator.removeAccount(entry.account)
            let days = try ToolTrash.keepDays
            print("Removed \(AccountQuery.title(entry.account))." + (id.map { " coffer restore \($0) brings it back (kept \(days) days)." } ?? ""))
        }
    }
}
