import CofferMFACommons
import CofferOrchestrate
import CofferStorage
import Foundation
import Synchronization

/// Signs a user in through their browser on this machine, as native apps do on a desktop
/// (RFC 8252): the authorization request goes to the browser, and the provider redirects it to
/// `http://127.0.0.1:<port>/callback`, where this agent listens for the one answer it waits for.
///
/// ```swift
/// let config = OidcClientConfig()
/// config.discoveryEndpoint = "https://id.example.com/.well-known/openid-configuration"
/// config.clientId = "my-cli"
/// config.scopes = ["openid", "profile", "offline_access"]
/// config.updateAgent(LoopbackAgent())
/// let token = try await OidcClient(config: config).token().get()
/// ```
///
/// What it guards against:
/// - **Another local user.** Any process on the machine can connect to 127.0.0.1, and the
///   authorization URL (with its `state`) is on the browser's command line for all to read.
///   The listener answers only connections from its own user (their owner is read from the
///   kernel's socket table) and refuses the rest unread, so no one else can hand it a code.
/// - **A forged or stale redirect.** An answer without the `state` sent, or with another, is
///   answered with an error page and never exchanged; the agent keeps waiting for the real one
///   until ``Settings/timeout``.
/// - **A mixed-up provider.** A redirect whose `iss` (RFC 9207) is not the provider's issuer, or
///   that has none when the provider says it always sends one, is refused.
/// - **Leaks.** The code is exchanged with the PKCE verifier (S256) that only this process
///   has; the pages it answers forbid caching and referrers.
///
/// The browser is started as ``Settings/browser`` says (`$BROWSER URL`, else `xdg-open URL`);
/// the URL is always shown through ``Settings/announce`` too, for a machine where no browser
/// opens.
public final class LoopbackAgent: Agent {
    /// How the agent listens and opens the browser.
    public struct Settings: Sendable {
        /// The port on 127.0.0.1 (0: one the kernel chooses, as RFC 8252 §7.3 recommends; the
        /// provider must accept any port for a loopback redirect, as the RFC requires).
        public var port: UInt16 = 0
        /// The redirect URI's path.
        public var path = "/callback"
        /// How long to wait for the browser's answer.
        public var timeout: Duration = .seconds(300)
        /// How the sign-in page is opened.
        public var browser: BrowserLauncher = .system
        /// Shown the sign-in URL and whether a browser was started; by default a line on
        /// standard error.
        public var announce: @Sendable (URL, Bool) -> Void = LoopbackAgent.announceOnStandardError

        /// The defaults.
        public init() {}
    }

    /// The agent's settings.
    public typealias T = Settings

    private let settings: Settings

    /// An agent with `settings`.
    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// The settings this agent was made with.
    public func config() -> () -> Settings { { [settings] in settings } }

    /// Prints where to sign in on standard error (never standard output, which a script may
    /// be reading a token from).
    public static let announceOnStandardError: @Sendable (URL, Bool) -> Void = { url, opened in
        let text = opened
            ? "Continue in your browser. If it did not open, visit:\n  \(url.absoluteString)\n"
            : "Open this address in a browser on this machine to sign in:\n  \(url.absoluteString)\n"
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Opens the authorization request in the browser and waits for the code at the loopback
    /// redirect.
    ///
    /// - Throws: ``OidcError/authorizeError(cause:message:)`` when the provider refused, no
    ///   answer came in time, or the provider has no authorization endpoint;
    ///   `CancellationError` when the task is cancelled.
    public func authorize(oidcConfig: OidcConfig<Settings>) async throws -> AuthCode {
        let client = oidcConfig.oidcClientConfig
        let settings = oidcConfig.config
        try await client.oidcInitialize()
        guard let openId = client.openId else { throw OidcError.unknown(message: "OpenID configuration not found") }
        // Where the browser goes must be the provider's, over https (a file: or plain http
        // address would be opened as readily).
        _ = try client.endpoint(\.authorizationEndpointIfPresent, named: "authorization_endpoint")
        let listener = try LoopbackListener(port: settings.port)
        let redirectUri = "http://127.0.0.1:\(listener.port)\(settings.path)"
        let pkce = Pkce.generate()
        let state = client.state ?? pkce.state
        let nonce = client.nonce ?? Pkce.randomText(bytes: 32)
        let request = client.populateRequest(request: Request(), pkce: pkce, responseMode: "", redirectUri: redirectUri, nonce: nonce)
        guard let url = request.urlRequest.url else { throw OidcError.authorizeError(message: "The authorization URL cannot be made") }
        let code = try await Self.wait(on: listener, timeout: settings.timeout, logger: client.logger) { listener in
            settings.announce(url, settings.browser.open(url))
        } answer: { request in
            guard request.path == settings.path else {
                request.respond(status: 404, title: "Not found", text: "This address only takes the provider's redirect.")
                return nil
            }
            guard request.value(OidcClient.Constants.state) == state else {
                request.respond(status: 400, title: "Not this sign-in",
                                text: "This answer does not belong to the sign-in that is waiting; it was not used. The sign-in is still waiting.")
                client.logger.w("A redirect with another state reached the sign-in's listener; it was refused", error: nil)
                return nil
            }
            if let problem = openId.redirectIssuerProblem(request.value("iss")) {
                request.respond(status: 400, title: "Wrong provider", text: "This answer does not come from the provider asked; it was not used.")
                return .failure(.authorizeError(message: problem))
            }
            if let error = request.value("error") {
                request.respond(status: 200, title: "Sign-in refused", text: "The provider refused the sign-in. You can close this tab.")
                let detail = request.value("error_description").map { ": " + String($0.prefix(200)) } ?? ""
                return .failure(.authorizeError(message: "The provider refused the sign-in: \(TerminalText.escaped(String(error.prefix(100)) + detail))"))
            }
            guard let code = request.value(OidcClient.Constants.code), !code.isEmpty else {
                request.respond(status: 400, title: "No code", text: "This answer carries no authorization code; the sign-in is still waiting.")
                return nil
            }
            request.respond(status: 200, title: "Signed in", text: "You are signed in. You can close this tab and return to the terminal.")
            return .success(code)
        }
        return AuthCode(code: code, codeVerifier: pkce.codeVerifier, redirectUri: redirectUri, nonce: nonce)
    }

    /// Ends the session at the provider in the browser (RP-initiated logout): the browser is
    /// sent to a one-time loopback address that redirects it to the provider's
    /// `end_session_endpoint` with the ID token as `id_token_hint`, so the ID token never
    /// appears on a command line; the provider sends it back to the loopback when done.
    ///
    /// - Returns: `true` once the provider sent the browser back; `false` when it has no
    ///   end-session endpoint or did not answer in time.
    @discardableResult
    public func endSession(oidcConfig: OidcConfig<Settings>, idToken: String) async throws -> Bool {
        let client = oidcConfig.oidcClientConfig
        let settings = oidcConfig.config
        try await client.oidcInitialize()
        guard let endpoint = try? client.endpoint(\.endSessionEndpointIfPresent, named: "end_session_endpoint"),
              var target = URLComponents(string: endpoint) else { return false }
        let listener = try LoopbackListener(port: settings.port)
        let redirectUri = "http://127.0.0.1:\(listener.port)\(settings.path)"
        let state = Pkce.randomText(bytes: 32)
        let start = "/end-session/" + Pkce.randomText(bytes: 32)
        target.queryItems = (target.queryItems ?? []) + [
            URLQueryItem(name: OidcClient.Constants.id_token_hint, value: idToken),
            URLQueryItem(name: OidcClient.Constants.client_id, value: client.clientId),
            URLQueryItem(name: "post_logout_redirect_uri", value: redirectUri),
            URLQueryItem(name: OidcClient.Constants.state, value: state),
        ]
        // `+` in a query is a space to many servers: encode it, as a form would.
        target.percentEncodedQuery = target.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let logout = target.url, let url = URL(string: "http://127.0.0.1:\(listener.port)\(start)") else { return false }
        let used = CancelFlag()
        do {
            _ = try await Self.wait(on: listener, timeout: settings.timeout, logger: client.logger) { _ in
                settings.announce(url, settings.browser.open(url))
            } answer: { request in
                if request.path == start, !used.value.exchange(true, ordering: .acquiringAndReleasing) {
                    request.redirect(to: logout)
                    return nil
                }
                guard request.path == settings.path, request.value(OidcClient.Constants.state) == state else {
                    request.respond(status: 404, title: "Not found", text: "This address is not in use.")
                    return nil
                }
                request.respond(status: 200, title: "Signed out", text: "You are signed out. You can close this tab.")
                return .success("")
            }
            return true
        } catch let error as OidcError {
            client.logger.e("The provider did not confirm the sign-out", error: error)
            return false
        }
    }

    /// Starts the browser (`open`), then hands each request from this user to `answer` until it
    /// returns a result; off Swift's cooperative pool, cancellable.
    private static func wait(
        on listener: LoopbackListener, timeout: Duration, logger: any CofferMFACommons.Logger,
        open: @escaping @Sendable (LoopbackListener) -> Void,
        answer: @escaping @Sendable (LoopbackRequest) -> Result<String, OidcError>?
    ) async throws -> String {
        let cancelled = CancelFlag()
        let outcome: Result<String, OidcError>? = await withTaskCancellationHandler {
            await OffPoolExecutor.runBlocking { () -> Result<String, OidcError>? in
                defer { listener.close() }
                open(listener)
                let deadline = ContinuousClock.now + timeout
                while let request = listener.next(until: deadline, cancelled: cancelled.value, request: { $0.read(until: min(deadline, .now + .seconds(5)), cancelled: cancelled.value) }) {
                    if let result = answer(request) { return result }
                }
                return nil
            }
        } onCancel: {
            cancelled.value.store(true, ordering: .releasing)
        }
        try Task.checkCancellation()
        guard let outcome else {
            throw OidcError.authorizeError(message: "No answer reached the sign-in's listener on 127.0.0.1:\(listener.port) within \(timeout); start the sign-in again")
        }
        return try outcome.get()
    }
}

/// A flag set once from one thread and read from another (a cancellation handler and a
/// blocking loop).
private final class CancelFlag: Sendable {
    let value = Atomic<Bool>(false)
}
