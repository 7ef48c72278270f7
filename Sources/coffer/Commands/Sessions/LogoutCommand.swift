import ArgumentParser
import CofferOidc
import CofferStorage
import Foundation

/// `coffer logout`: ends a session at its provider and removes it.
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
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
    var name: String

    @OptionGroup var options: DataOptions

    func run() async throws {
        try await reportingErrors {
            let revoked: Bool
            do {
                revoked = try await options.sessions().logout(name)
            } catch {
                throw SessionFailure.of(error)
            }
            guard revoked else {
                throw CommandFailure("the session '\(name)' was removed, but the provider could not be told: its tokens stay valid until they expire",
                                     status: .unavailable)
            }
            StandardStreams.note("coffer: signed out; the session '\(name)' is removed")
        }
    }
}
