import CofferOidc
import CofferStorage
import CofferTool
import Foundation

extension LoginCommand {
    func perform() async throws {
        try await reportingErrors {
            do {
                try await signIn()
            } catch {
                throw SessionFailure.of(error)
            }
        }
    }

    private func signIn() async throws {
        let sessions = try options.sessions()
        let known = try await sessions.settings(name)
        guard let issuer = issuer ?? known?.issuer, let clientId = clientId ?? known?.clientId else {
            throw CommandFailure.usage("a new session needs --issuer and --client-id")
        }
        if let problem = OidcSessionSettings.issuerProblem(issuer) { throw CommandFailure.usage("--issuer: \(problem)") }
        // Signing in again to the same client keeps what was given the first time unless said anew.
        let same = issuer == known?.issuer && clientId == known?.clientId
        let secret = try clientSecretFile.map(Self.readSecret) ?? (same ? known?.clientSecret : nil)
        let method = clientSecretMethod.map { "client_secret_" + $0 }
            ?? (same && known?.authenticationMethod != "none" ? known?.authenticationMethod : nil) ?? "client_secret_basic"
        let asked = scopes.isEmpty && same ? known?.scopes ?? [] : scopes
        let settings = OidcSessionSettings(
            issuer: issuer, clientId: clientId, scopes: Array(Set(["openid"] + asked)).sorted(),
            authenticationMethod: secret == nil ? "none" : method, clientSecret: secret)
        var agent = LoopbackAgent.Settings()
        agent.timeout = .seconds(timeout)
        if noBrowser { agent.browser = .none }
        let token = try await sessions.signIn(name, settings: settings, agent: LoopbackAgent(settings: agent),
                                              device: try await useDevice(sessions, settings) ? Self.showCodes : nil)
        let who = OidcSessions.userName(of: token).map { " as \(TerminalText.escaped($0))" } ?? ""
        StandardStreams.note("coffer: signed in to \(TerminalText.escaped(issuer))\(who); the session is kept as '\(name)'")
    }

    /// The device grant with --device, or where no browser can be shown (no graphical session,
    /// no $BROWSER) and the provider offers it.
    private func useDevice(_ sessions: OidcSessions, _ settings: OidcSessionSettings) async throws -> Bool {
        if device { return true }
        let graphical = ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"].contains { !(ProcessEnvironment.value($0) ?? "").isEmpty }
        guard !graphical, !noBrowser else { return false }
        let config = try sessions.config(name, settings: settings)
        try await config.oidcInitialize()
        return !(config.openId?.deviceAuthorizationEndpoint ?? "").isEmpty
    }

    private static let showCodes: @Sendable (DeviceAuthorizationResponse) -> Void = { codes in
        StandardStreams.note("To sign in, visit \(TerminalText.escaped(codes.verificationUri)) and enter the code \(TerminalText.escaped(codes.userCode))")
        if let complete = codes.verificationUriComplete { StandardStreams.note("  (or open \(TerminalText.escaped(complete)))") }
        StandardStreams.note("Waiting for the sign-in (the code expires in \(codes.expiresIn / 60) minutes)...")
    }

    /// The secret in `path`: a file of yours that no one else can read, its first line.
    private static func readSecret(_ path: String) throws -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { throw CommandFailure("cannot read the client secret file \(path): \(String(cString: strerror(errno)))") }
        if UInt32(info.st_mode) & 0o077 != 0 || info.st_uid != geteuid() {
            throw CommandFailure("the client secret file \(path) must be yours and readable by you alone (chmod 600 \(path))")
        }
        let data = try StandardStreams.readFile(path, limit: 4096)
        guard let text = String(data: data, encoding: .utf8)?.split(whereSeparator: \.isNewline).first.map(String.init), !text.isEmpty else {
            throw CommandFailure("the client secret file \(path) is empty")
        }
        return text
    }
}
