import ArgumentParser
import CofferAuthenticator
import Foundation

/// `coffer list`: the accounts, never their secrets unless asked.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the accounts and their mechanisms.",
        discussion: """
            QUERY, when given, keeps the accounts it matches, as code does: part of the issuer \
            or account name, or the whole 'Issuer: account'; case and accents do not matter. \
            Exits with status 2 when QUERY matches nothing.

            Examples:
              coffer list
              coffer list github
              coffer list --json
              coffer list --show-secret     # prints secrets; a warning goes to stderr
            """)

    @Argument(help: ArgumentHelp("Only the accounts this matches.", valueName: "query"), completion: .custom(AccountCompletion.titles))
    var query: String?
    @Flag(help: "Print JSON instead of a table.") var json = false
    @Flag(help: "Include the secrets (careful: anyone who sees them can make your codes).") var showSecret = false
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open()
            let entries = AccountQuery.sorted(query == nil ? authenticator.accounts() : try AccountQuery.entries(matching: query, authenticator, storage))
            try PostgresBackend.requireAnswered(storage)
            if let query, entries.isEmpty, UnreadableRecords.summary(storage, directory: options.data.directory) == nil {
                throw CommandFailure.noMatch("no account matches '\(query)'; coffer list shows them all")
            }
            if entries.isEmpty, let unreadable = UnreadableRecords.summary(storage, directory: options.data.directory) {
                throw CommandFailure(unreadable)
            }
            let unreadable = UnreadableRecords.summary(storage, directory: options.data.directory)
            if showSecret {
                StandardStreams.note("coffer: warning: secrets are printed below; anyone who sees them can generate your codes")
            }
            if json {
                try JSONOutput.print(entries.map { AccountSummary($0, showSecrets: showSecret) })
                if let unreadable { throw CommandFailure(unreadable) }
                return
            }
            guard !entries.isEmpty else {
                print("No accounts yet in \(try options.location()). Add one with: coffer add -  (then paste the otpauth:// URI)")
                return
            }
            print("Accounts in \(try options.location()):")
            let rows = entries.map { entry in
                let types = entry.mechanisms.map { $0.type.rawValue.uppercased() }.joined(separator: ", ")
                let lock = entry.account.isLocked ? "  [locked\(entry.account.lockingPolicy.map { ": \($0)" } ?? "")]" : ""
                return [AccountQuery.title(entry.account), types + lock]
            }
            for (entry, line) in zip(entries, AccountQuery.columns(rows, indent: "  ")) {
                print(line)
                if showSecret {
                    for mechanism in entry.mechanisms { print("      \(mechanism.type.rawValue) secret: \(mechanism.secret)") }
                }
            }
            // The listing is incomplete: say so, and exit 1 so scripts notice.
            if let unreadable { throw CommandFailure(unreadable) }
        }
    }
}
