import ArgumentParser
import CofferStorage
import Foundation

/// `coffer sessions`: the stored sessions, never a token.
package struct SessionsCommand: SessionCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List the signed-in sessions: name, issuer, user, scopes, expiry (never a token).",
        discussion: """
            Examples:
              coffer sessions
              coffer sessions --json
            """)

    @Flag(help: "Print JSON instead of a table.")
    package var json = false

    @OptionGroup package var options: DataOptions

    package func run() async throws { try await SessionCommands.here().run(self) }
}
