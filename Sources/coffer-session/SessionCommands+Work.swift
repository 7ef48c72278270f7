import CofferOidc
import CofferStorage
import CofferTool
import Foundation

extension TokenCommand {
    /// Prints the token (refreshed first when it expires within --min-valid).
    func perform() async throws {
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

extension LogoutCommand {
    /// Revokes the tokens, then removes the session.
    func perform() async throws {
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

extension SessionsCommand {
    /// Lists the sessions.
    func perform() async throws {
        try await reportingErrors {
            let sessions = try options.sessions()
            var summaries: [OidcSessionSummary] = []
            for name in try sessions.names() { summaries.append(try await sessions.summary(name)) }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
                try StandardStreams.writeOutput(try encoder.encode(summaries) + Data("\n".utf8))
                return
            }
            if summaries.isEmpty {
                if isatty(STDOUT_FILENO) == 1 { StandardStreams.note("No sessions (coffer login NAME --issuer URL --client-id ID signs in).") }
                return
            }
            let now = Int64(Date().timeIntervalSince1970)
            let lines = summaries.map { summary in
                let expiry = summary.expiresAt.map { $0 <= now ? "expired" : "expires in \(Self.duration($0 - now))" } ?? "no expiry given"
                let refresh = summary.canRefresh ? "" : ", no refresh token"
                return [summary.name, summary.issuer, summary.subject ?? "-", summary.scopes.joined(separator: " "), expiry + refresh]
                    .map(TerminalText.escaped).joined(separator: "\t")
            }
            try StandardStreams.writeOutput(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
    }

    private static func duration(_ seconds: Int64) -> String {
        seconds >= 3600 ? "\(seconds / 3600) h \(seconds % 3600 / 60) min" : seconds >= 60 ? "\(seconds / 60) min" : "\(seconds) s"
    }
}
