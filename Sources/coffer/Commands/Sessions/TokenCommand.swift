import ArgumentParser
import CofferOidc
import CofferStorage
import Foundation

/// `coffer token`: a valid access token of a session, for scripts.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a valid access token of a session, refreshing it first when it expires soon.",
        discussion: """
            The token alone goes to standard output, for:
              curl -H "Authorization: Bearer $(coffer token work)" https://api.example.com/

            Processes asking at once share one refresh: the first refreshes, the others wait and \
            print its token (a rotating refresh token is never presented twice). When the provider \
            refuses to refresh, the session is kept and coffer says to sign in again (status 1).

            Examples:
              coffer token work
              coffer token work --min-valid 300
              coffer token work --json
            """)

    @Argument(help: "The session's name.")
    var name: String

    @Option(help: ArgumentHelp("Refresh first when the token expires within this many seconds.", valueName: "seconds"))
    var minValid: Int64 = 60

    @Flag(help: "Print JSON: the token with its type, scopes and expiry.")
    var json = false

    @OptionGroup var options: DataOptions

    func validate() throws {
        guard (0...86_400).contains(minValid) else { throw ValidationError("--min-valid takes 0 to 86400 seconds") }
    }

    func run() async throws {
        try await reportingErrors {
            let token: Token
            do {
                token = try await options.sessions().token(name, minValid: minValid)
            } catch {
                throw SessionFailure.of(error)
            }
            if json {
                var object: [String: Any] = ["access_token": token.accessToken, "token_type": token.tokenType ?? "Bearer"]
                if let scope = token.scope { object["scope"] = scope }
                if token.hasKnownExpiry { object["expires_at"] = token.expiresAt }
                try StandardStreams.writeOutput(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) + Data("\n".utf8))
            } else {
                try StandardStreams.writeOutput(Data((token.accessToken + "\n").utf8))
            }
        }
    }
}
