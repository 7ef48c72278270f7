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
            """,
        aliases: ["ls"])

    @Argument(help: ArgumentHelp("Only the accounts this matches.", valueName: "query"), completion: .custom(AccountCompletion.titles))
    var query: String?
    @Flag(help: "Print JSON instead of a table.") var json = false
    @Flag(help: "Include the secrets (careful: anyone who sees them can make your codes).") var showSecret = false
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open(keyless: !showSecret)
            let entries = AccountSearch.sorted(query == nil ? await authenticator.accounts() : try AccountQuery.entries(matching: query, authenticator, storage))
            try PostgresBackend.requireAnswered(storage)
            if let query, entries.isEmpty, UnreadableRecords.failure(storage, directory: options.data.directory) == nil {
                throw CommandFailure.noMatch("no account matches '\(query)'; coffer list shows them all")
            }
            if entries.isEmpty, let unreadable = UnreadableRecords.failure(storage, directory: options.data.directory) {
                throw unreadable
            }
            var unreadable = UnreadableRecords.failure(storage, directory: options.data.directory)
            // The key cannot be opened now: names and types need none (they are not sealed), so
            // the listing is whole without it; codes and secrets wait for the key.
            var outlines: [String: [MechanismOutline]] = [:]
            if let sqlite = storage as? SQLiteStorageClient, let summary = unreadable, sqlite.keyProblem != nil {
                if showSecret { throw summary }
                let shown = Set(entries.flatMap(\.mechanisms).map(\.mechanismUUID))
                outlines = Dictionary(grouping: try sqlite.mechanismOutlines().filter { !shown.contains($0.mechanismUUID) }) { Self.key($0.issuer, $0.accountName) }
                StandardStreams.note("coffer: note: \(summary) Names and types are listed without the key.")
                unreadable = nil
            }
            if showSecret {
                StandardStreams.note("coffer: warning: secrets are printed below; anyone who sees them can generate your codes")
            }
            if json {
                try JSONOutput.print(entries.map { entry in
                    AccountSummary(entry, showSecrets: showSecret, outlines: outlines[Self.key(entry.account.issuer, entry.account.accountName)] ?? [])
                })
                if let unreadable { throw unreadable }
                return
            }
            // At a terminal a header says where the accounts are; into a pipe standard output is
            // one account per line, and an empty list is said on standard error.
            let atTerminal = isatty(STDOUT_FILENO) == 1
            guard !entries.isEmpty else {
                let hint = "No accounts yet in \(try options.location()). Add one with: coffer add -  (then paste the otpauth:// URI)"
                if atTerminal { print(hint) } else { StandardStreams.note(hint) }
                return
            }
            if atTerminal { print("Accounts in \(try options.location()):") }
            let rows = entries.map { entry in
                let outlined = outlines[Self.key(entry.account.issuer, entry.account.accountName)] ?? []
                let types = (entry.mechanisms.map(\.type) + outlined.map(\.type)).map { $0.rawValue.uppercased() }.joined(separator: ", ")
                let lock = entry.account.isLocked ? "  [locked\(entry.account.lockingPolicy.map { ": \($0)" } ?? "")]" : ""
                return [AccountQuery.title(entry.account), types + lock]
            }
            for (entry, line) in zip(entries, AccountQuery.columns(rows, indent: atTerminal ? "  " : "")) {
                print(line)
                if showSecret {
                    for mechanism in entry.mechanisms { print("      \(mechanism.type.rawValue) secret: \(mechanism.secret)") }
                }
            }
            // The listing is incomplete: say so, and exit 1 so scripts notice.
            if let unreadable { throw unreadable }
        }
    }

    /// An account's identity (its issuer's names, which `rename` does not change) as one key.
    private static func key(_ issuer: String, _ accountName: String) -> String { issuer + "\u{0}" + accountName }
}
