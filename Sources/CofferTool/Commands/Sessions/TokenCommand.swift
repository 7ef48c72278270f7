import ArgumentParser
import CofferStorage
import Foundation

/// `coffer token`: a valid access token of a session, for scripts.
package struct TokenCommand: SessionCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
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
    package var name: String

    @Option(help: ArgumentHelp("Refresh first when the token expires within this many seconds.", valueName: "seconds"))
    package var minValid: Int64 = 60

    @Flag(help: "Print JSON: the token with its type, scopes and expiry.")
    package var json = false

    @OptionGroup package var options: DataOptions

    package func validate() throws {
        guard (0...86_400).contains(minValid) else { throw ValidationError("--min-valid takes 0 to 86400 seconds") }
    }

    package func run() async throws { try await SessionCommands.here().run(self) }
}
