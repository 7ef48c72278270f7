import CofferOidc
import CofferStorage
import CofferTool
import Foundation

/// The session commands' work, with `CofferOidc`: what `coffer-session` gives the tool.
struct OidcSessionWork: SessionWork {
    func problem(withName name: String) -> String? {
        OidcSessions.problem(with: name)
    }

    func run(_ command: any SessionCommand) async throws {
        switch command {
        case let login as LoginCommand: try await login.perform()
        case let token as TokenCommand: try await token.perform()
        case let logout as LogoutCommand: try await logout.perform()
        case let sessions as SessionsCommand: try await sessions.perform()
        default: throw CommandFailure("coffer-session has no work for \(type(of: command)._commandName)")
        }
    }

    /// Each session that can no longer give a token without signing in again fails, with the
    /// command that signs in.
    func checkSessions(in directory: URL, _ report: (DoctorCommand.Outcome, String, String) -> Void) async {
        do {
            let sessions = try OidcSessions(directory: directory)
            let names = try sessions.names()
            var failing = 0
            for name in names {
                if let problem = await sessions.refreshProblem(name) {
                    failing += 1
                    report(.fail, "session \(name)", "\(TerminalText.escaped(problem)); sign in again: coffer login \(name)")
                }
            }
            if failing == 0 { report(.ok, "sessions", names.isEmpty ? "none" : "\(names.count) can give tokens (\(names.joined(separator: ", ")))") }
        } catch {
            report(.fail, "sessions", "\(directory.path) cannot be used: \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
        }
    }
}

extension DataOptions {
    /// The named OpenID Connect sessions, in `<data-dir>/sessions`.
    func sessions() throws -> OidcSessions {
        try OidcSessions(directory: SessionCommands.directory(in: self))
    }
}
