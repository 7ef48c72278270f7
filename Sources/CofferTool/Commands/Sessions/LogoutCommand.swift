import ArgumentParser
import CofferStorage
import Foundation

/// `coffer logout`: ends a session at its provider and removes it.
package struct LogoutCommand: SessionCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Revoke a session's tokens at its provider, then remove the session.",
        discussion: """
            The refresh and access tokens are revoked (RFC 7009), then the session's files are \
            removed. When the provider cannot be reached the session is removed all the same and \
            coffer says the tokens may still be valid until they expire (status 69).

            Example:
              coffer logout work
            """)

    @Argument(help: "The session's name.")
    package var name: String

    @OptionGroup package var options: DataOptions

    package func run() async throws { try await SessionCommands.here().run(self) }
}
