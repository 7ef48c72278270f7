import ArgumentParser
import CofferAuthenticator
import Foundation

/// `coffer code`: current codes.
struct CodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "code",
        abstract: "Print the current code of every matching account.",
        discussion: """
            QUERY matches part of the issuer or account name (case does not matter), or an exact \
            'issuer:account'. With no QUERY, every account's code is printed. A HOTP code moves its \
            counter on: each run prints the next code. Exits with status 1 when nothing matches.

            Examples:
              coffer code
              coffer code github
              coffer code 'Example:alice@example.com' --json
            """)

    @Argument(help: "Which accounts.") var query: String?
    @Flag(help: "Print JSON.") var json = false
    @OptionGroup var options: AuthenticatorOptions

    struct CodeOutput: Encodable {
        let issuer: String
        let accountName: String
        let type: String
        let code: String?
        let secondsRemaining: Int?
        let error: String?
    }

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open()
            let matches = AccountQuery.entries(matching: query, authenticator, storage)
                .filter { $0.mechanisms.contains { $0.type != .push } }
            let unreadable = UnreadableRecords.summary(storage, directory: options.data.directory)
            guard !matches.isEmpty else {
                if let unreadable { throw CommandFailure(unreadable) }
                throw CommandFailure(query.map { "no account with a code matches '\($0)'; see coffer list" }
                                     ?? "no accounts with codes yet; add one with coffer add")
            }
            var outputs: [CodeOutput] = []
            for entry in matches {
                for mechanism in entry.mechanisms where mechanism.type != .push {
                    do {
                        let code = try authenticator.code(for: mechanism)
                        outputs.append(CodeOutput(issuer: entry.account.issuer, accountName: entry.account.accountName,
                                                  type: mechanism.type.rawValue, code: code.code,
                                                  secondsRemaining: code.secondsRemaining(), error: nil))
                    } catch {
                        outputs.append(CodeOutput(issuer: entry.account.issuer, accountName: entry.account.accountName,
                                                  type: mechanism.type.rawValue, code: nil, secondsRemaining: nil,
                                                  error: error.localizedDescription))
                    }
                }
            }
            if json {
                try JSONOutput.print(outputs)
            } else {
                for output in outputs {
                    let title = "\(output.issuer): \(output.accountName)"
                    if let code = output.code {
                        print("\(title)  \(code)" + (output.secondsRemaining.map { "  \($0)s left" } ?? ""))
                    } else {
                        print("\(title)  (no code: \(output.error ?? "unknown error"))")
                    }
                }
            }
            if let unreadable {
                // Every account was asked for and the listing is incomplete: exit 1, as list does.
                if query == nil { throw CommandFailure(unreadable) }
                StandardStreams.note("coffer: warning: \(unreadable)")
            }
            if outputs.allSatisfy({ $0.code == nil }) { throw ExitCode.failure }
        }
    }
}
