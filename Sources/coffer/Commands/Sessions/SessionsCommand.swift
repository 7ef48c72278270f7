import ArgumentParser
import CofferOidc
import CofferStorage
import Foundation

/// `coffer sessions`: the stored sessions, never a token.
struct SessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List the signed-in sessions: name, issuer, user, scopes, expiry (never a token).",
        discussion: """
            Examples:
              coffer sessions
              coffer sessions --json
            """)

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @OptionGroup var options: DataOptions

    func run() async throws {
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
