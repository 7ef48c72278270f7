import ArgumentParser
import CofferAuthenticator
import Foundation

/// `coffer code`: current codes.
struct CodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "code",
        abstract: "Print the current code of every matching account.",
        discussion: """
            QUERY matches part of the issuer or account name, or the whole 'Issuer: account' as \
            list prints it; case and accents do not matter. With no QUERY, every TOTP account's \
            code is printed. A HOTP code uses up its counter value, so one is issued only when \
            QUERY names exactly one account; other HOTP accounts are listed without a code. \
            Exits with status 2 when nothing matches, 3 when --raw or --copy matches several \
            accounts.

            Examples:
              coffer code
              coffer code github
              coffer code 'GitHub: alice' --raw
              coffer code github --copy
              coffer code --watch --next
            """)

    @Argument(help: ArgumentHelp("Which accounts.", valueName: "query"), completion: .custom(AccountCompletion.titles))
    var query: String?
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Print only the code, nothing else (QUERY must name one account).") var raw = false
    @Flag(help: ArgumentHelp("Put the code on the clipboard (QUERY must name one account).",
                             discussion: "Uses wl-copy, xclip or xsel, else the terminal (OSC 52); cleared after 30 s unless it changed."))
    var copy = false
    @Flag(help: "Redraw the codes every second with a countdown, until Ctrl-C (never issues a HOTP code).") var watch = false
    @Flag(help: "With --watch, also show the next TOTP code.") var next = false
    @OptionGroup var options: AuthenticatorOptions

    struct CodeOutput: Encodable {
        let issuer: String
        let accountName: String
        let type: String
        let code: String?
        let secondsRemaining: Int?
        /// Why there is no code: an error, or a HOTP account not asked for by name.
        let error: String?
        let note: String?
    }

    func validate() throws {
        if next, !watch { throw ValidationError("--next goes with --watch") }
        if watch, raw || copy || json { throw ValidationError("--watch cannot be combined with --raw, --copy or --json") }
        if raw, copy { throw ValidationError("choose one of --raw and --copy") }
    }

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open()
            let entries = try AccountQuery.entries(matching: query, authenticator, storage)
                .filter { $0.mechanisms.contains { $0.type != .push } }
            let unreadable = UnreadableRecords.summary(storage, directory: options.data.directory)
            guard !entries.isEmpty else {
                if let unreadable { throw CommandFailure(unreadable) }
                throw CommandFailure.noMatch(query.map { "no account with a code matches '\($0)'; see coffer list" }
                                             ?? "no accounts with codes yet; add one with coffer add")
            }
            if watch { try CodeWatch.run(entries, showNext: next) }
            if raw || copy { _ = try AccountQuery.one(entries, query: query) }
            let tool = copy ? try Clipboard.tool() : nil
            let outputs = codes(for: entries, authenticator)
            if let tool {
                guard outputs.count == 1, let code = outputs[0].code else {
                    throw CommandFailure(outputs.first?.error ?? "that account has more than one code; ask for it without --copy")
                }
                try Clipboard.copy(code, with: tool)
                let title = "\(outputs[0].issuer): \(outputs[0].accountName)"
                print(tool == .osc52
                      ? "Copied the code of \(title) through the terminal (OSC 52); it is not cleared automatically."
                      : "Copied the code of \(title) with \(tool.rawValue); it is cleared in \(Clipboard.clearAfter) s unless the clipboard changes.")
            } else if raw {
                guard outputs.count == 1, let code = outputs[0].code else {
                    throw CommandFailure(outputs.first?.error ?? "that account has more than one code; ask for it without --raw")
                }
                print(code)
            } else if json {
                try JSONOutput.print(outputs)
            } else {
                for output in outputs { print(Self.line(output)) }
            }
            if let unreadable {
                // Every account was asked for and the listing is incomplete: exit 1, as list does.
                if query == nil { throw CommandFailure(unreadable) }
                StandardStreams.note("coffer: warning: \(unreadable)")
            }
            if outputs.allSatisfy({ $0.code == nil }), outputs.contains(where: { $0.error != nil }) { throw ExitCode.failure }
        }
    }

    /// The codes of `entries`. A HOTP code uses up its counter value, so it is issued only when
    /// the query names exactly one account; with no query, or several matches, HOTP accounts
    /// are listed without one.
    private func codes(for entries: [AccountEntry], _ authenticator: AuthenticatorClient) -> [CodeOutput] {
        let issuesHOTP = query != nil && entries.count == 1
        var outputs: [CodeOutput] = []
        for entry in entries {
            // As stored: the text output escapes them as it prints, JSON as it encodes.
            let issuer = entry.account.shownIssuer, name = entry.account.shownAccountName
            for mechanism in entry.mechanisms where mechanism.type != .push {
                if mechanism.type == .hotp, !issuesHOTP {
                    outputs.append(CodeOutput(issuer: issuer, accountName: name, type: mechanism.type.rawValue, code: nil,
                                              secondsRemaining: nil, error: nil,
                                              note: "HOTP: run coffer code '\(AccountQuery.title(entry.account))' for the next code"))
                    continue
                }
                do {
                    // TOTP and Steam codes come from the mechanism just read (nothing to store);
                    // HOTP goes through the client, which claims the counter value atomically.
                    let code = mechanism.type == .hotp || entry.account.isLocked
                        ? try authenticator.code(for: mechanism) : try CodeWatch.code(mechanism, at: Date())
                    outputs.append(CodeOutput(issuer: issuer, accountName: name, type: mechanism.type.rawValue, code: code.code,
                                              secondsRemaining: code.secondsRemaining(), error: nil, note: nil))
                } catch {
                    outputs.append(CodeOutput(issuer: issuer, accountName: name, type: mechanism.type.rawValue, code: nil,
                                              secondsRemaining: nil, error: error.localizedDescription, note: nil))
                }
            }
        }
        return outputs
    }

    private static func line(_ output: CodeOutput) -> String {
        let title = "\(output.issuer): \(output.accountName)"
        if let code = output.code { return "\(title)  \(code)" + (output.secondsRemaining.map { "  \($0)s left" } ?? "") }
        if let note = output.note { return "\(title)  (\(note))" }
        return "\(title)  (no code: \(output.error ?? "unknown error"))"
    }
}
