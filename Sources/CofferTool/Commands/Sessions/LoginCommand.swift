import ArgumentParser
import CofferStorage
import Foundation

/// `coffer login`: signs in to an OpenID Provider and keeps the session, sealed, under a name.
package struct LoginCommand: SessionCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to an OpenID Connect provider and keep the session under a name.",
        discussion: """
            Opens the provider's sign-in page in your browser ($BROWSER, else xdg-open) and waits \
            for it on http://127.0.0.1:<port>/callback, a port chosen for this sign-in; the \
            address is printed too. On a machine without a graphical session, or with --device, \
            it uses the device grant instead: it prints an address and a code to enter there from \
            any device, and waits.

            The session (its tokens and these settings) is sealed in <data-dir>/sessions under a \
            key in the OS keyring, else in a 0600 key file. Signing in again under a name replaces \
            its session once the new one is stored. A confidential client's secret is read from \
            a file (never the command line, which other users can read).

            Examples:
              coffer login work --issuer https://id.example.com --client-id cli --scope offline_access
              coffer login ci --issuer https://id.example.com --client-id ci --device
              coffer login api --issuer https://id.example.com --client-id api --client-secret-file ~/.config/api.secret
            """)

    @Argument(help: "The session's name (letters, digits, '.', '-', '_').")
    package var name: String

    @Option(help: ArgumentHelp("The provider's issuer URL (its discovery document is at ISSUER/.well-known/openid-configuration).", valueName: "url"))
    package var issuer: String?

    @Option(help: ArgumentHelp("The client's id at the provider.", valueName: "id"))
    package var clientId: String?

    @Option(help: ArgumentHelp("A file holding a confidential client's secret (yours, not readable by others).", valueName: "file"))
    package var clientSecretFile: String?

    @Option(help: ArgumentHelp("How the secret is sent: basic (an Authorization header, the default) or post (in the form).", valueName: "basic|post"))
    package var clientSecretMethod: String?

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope to ask for besides openid (repeat for more; offline_access for a refresh token at many providers).", valueName: "scope"))
    package var scopes: [String] = []

    @Flag(help: "Use the device grant: show an address and a code to enter on another device.")
    package var device = false

    @Flag(help: "Do not start a browser; print the address to open instead.")
    package var noBrowser = false

    @Option(help: ArgumentHelp("How long to wait for the sign-in, in seconds.", valueName: "seconds"))
    package var timeout: Int = 300

    @OptionGroup package var options: DataOptions

    package func validate() throws {
        if let problem = try SessionCommands.here().problem(withName: name) { throw ValidationError(problem) }
        guard ["basic", "post"].contains(clientSecretMethod ?? "basic") else { throw ValidationError("--client-secret-method takes basic or post") }
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout takes 1 to 3600 seconds") }
    }

    package func run() async throws { try await SessionCommands.here().run(self) }
}
