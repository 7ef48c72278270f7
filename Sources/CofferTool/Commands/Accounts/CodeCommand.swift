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
              coffer code github --next        # the code after this one
              coffer code github --at '2026-11-24 09:30'   # local; or '… UTC'
              coffer code github -c          # -c is --copy, as in pass otp -c
              coffer code --json     # with id, period, digits, validUntil
              coffer code --watch --next
            """,
        aliases: ["otp"])

    @Argument(help: ArgumentHelp("Which accounts.", valueName: "query"), completion: .custom(AccountCompletion.titles))
    var query: String?
    @Flag(help: "Print JSON.") var json = false
    @Flag(name: .shortAndLong, help: "Print only the code, nothing else (QUERY must name one account).") var raw = false
    @Flag(name: .shortAndLong, help: ArgumentHelp("Put the code on the clipboard (QUERY must name one account).",
                             discussion: "Uses wl-copy, xclip or xsel, else the terminal (OSC 52); cleared after 30 s unless it changed."))
    var copy = false
    @Flag(name: .shortAndLong, help: "Redraw the codes every second with a countdown, until Ctrl-C (never issues a HOTP code).") var watch = false
    @Flag(name: .shortAndLong, help: "The code of the next time step instead of the current one (with --watch: beside it).") var next = false
    @Option(help: ArgumentHelp("The code at this time instead of now: '2026-11-24 09:30' (local time), '2026-11-24 09:30 UTC', "
                               + "2026-11-24T09:30:00Z, now, or @UNIXSECONDS.", valueName: "time"))
    var at: CodeTime?
    @OptionGroup var options: AuthenticatorOptions

    func validate() throws {
        if watch, raw || copy || json || at != nil { throw ValidationError("--watch cannot be combined with --raw, --copy, --json or --at") }
        if raw, copy { throw ValidationError("choose one of --raw and --copy") }
        if raw, json { throw ValidationError("choose one of --raw and --json") }
        if next, at != nil { throw ValidationError("choose one of --next and --at") }
    }

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open()
            let matched = try AccountQuery.entries(matching: query, authenticator, storage)
            var entries = AccountSearch.sorted(matched.filter { $0.mechanisms.contains { $0.type != .push } })
            let unreadable = UnreadableRecords.failure(storage, directory: options.data.directory)
            guard !entries.isEmpty else {
                if let unreadable { throw unreadable }
                // The account is there without a mechanism: one is being replaced right now, or
                // a replacement was stopped halfway (its counter is kept: see HOTPCounterLedger).
                if query != nil, let bare = matched.first(where: { $0.mechanisms.isEmpty }) {
                    throw CommandFailure.noMatch("run coffer code again: \(AccountQuery.title(bare.account)) has no mechanism just now, as "
                        + "another command replaces it; if that stays so, one was stopped halfway: coffer trash, or add it again")
                }
                throw CommandFailure.noMatch(query.map { "no account with a code matches '\($0)'; see coffer list" }
                                             ?? "no accounts with codes yet; add one with coffer add")
            }
            if watch { try CodeWatch.run(entries, showNext: next) }
            if raw || copy { entries = [try AccountQuery.one(entries, query: query)] }
            let tool = copy ? try Clipboard.tool() : nil
            let outputs = try await codes(for: entries, authenticator)
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
                for line in AccountQuery.columns(outputs.map(\.cells)) { print(line) }
            }
            if let unreadable {
                // Every account was asked for and the listing is incomplete: exit 1, as list does.
                if query == nil { throw unreadable }
                StandardStreams.note("coffer: warning: \(unreadable)")
            }
            if outputs.allSatisfy({ $0.code == nil }), outputs.contains(where: { $0.error != nil }) { throw ExitCode.failure }
        }
    }

    /// The codes of `entries`: now, at the next time step (`--next`) or at `--at`. A HOTP code
    /// uses up its counter value, so it is issued only when the query names exactly one account
    /// and the code is for now; otherwise HOTP accounts are listed without one.
    private func codes(for entries: [AccountEntry], _ authenticator: AuthenticatorClient) async throws -> [CodeReport] {
        let now = Date()
        let issuesHOTP = query != nil && entries.count == 1 && !next && at == nil
        var reports: [CodeReport] = []
        for entry in entries {
            for mechanism in entry.mechanisms where mechanism.type != .push {
                if mechanism.type == .hotp, !issuesHOTP {
                    let why = next || at != nil ? "HOTP codes are not tied to a time" : "HOTP: run coffer code '\(AccountQuery.title(entry.account))' for the next code"
                    reports.append(CodeReport(entry, mechanism, now: now, note: why))
                    continue
                }
                do {
                    // TOTP and Steam codes come from the mechanism just read (nothing to store);
                    // HOTP goes through the client, which claims the counter value atomically.
                    let code: OathCode
                    if mechanism.type == .hotp || entry.account.isLocked {
                        code = try await authenticator.code(for: mechanism)
                    } else {
                        var time = at?.date ?? now
                        if next { time = try CodeWatch.code(mechanism, at: now).validUntil ?? now }
                        code = try CodeWatch.code(mechanism, at: time)
                    }
                    reports.append(CodeReport(entry, mechanism, code: code, now: now))
                } catch {
                    reports.append(CodeReport(entry, mechanism, now: now, error: Self.describe(error, entry)))
                }
            }
        }
        return reports
    }

    /// The mechanism went between reading it and claiming its counter (another command
    /// replaced or removed it): said so, without its id; no code was issued.
    private static func describe(_ error: any Error, _ entry: AccountEntry) -> String {
        let gone: Bool
        switch error {
        case AuthenticatorError.notFound: gone = true
        case AuthenticatorError.storageFailed(_, StorageClientError.mechanismNotFound?): gone = true
        default: gone = false
        }
        guard gone else { return error.localizedDescription }
        return "run coffer code again: \(AccountQuery.title(entry.account)) was replaced or removed by another command just now, and no code was issued"
    }
}

/// A time `--at` accepts: ISO 8601 with a zone (`2026-11-24T09:30:00Z`), `YYYY-MM-DD HH:MM:SS`
/// in UTC (as oathtool's `--now`), or `@` and Unix seconds.
/// A time as people type it for `--at`, the way `oathtool --now` takes date(1) strings: `now`,
/// `@UNIXSECONDS`, ISO 8601 (`2026-11-24T09:30:00Z`, with an offset), or `2026-11-24 09:30`
/// with optional seconds and an optional zone (`UTC`, `Z`, `+01:00`). A time without a zone is
/// this machine's local time, as date(1) reads it (`TZ` decides).
struct CodeTime: ExpressibleByArgument {
    let date: Date

    init(date: Date) { self.date = date }

    init?(argument: String) {
        guard let date = Self.parse(argument, now: Date(), zone: .current) else { return nil }
        self.date = date
    }

    static func parse(_ argument: String, now: Date, zone: TimeZone) -> Date? {
        var text = argument.trimmingCharacters(in: .whitespaces)
        if text.lowercased() == "now" { return now }
        if text.hasPrefix("@"), let seconds = Int64(text.dropFirst()), seconds >= 0, seconds < 1 << 40 {
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        if let parsed = try? Date.ISO8601FormatStyle().parse(text) { return parsed }
        // A zone at the end: " UTC", " GMT", "Z", " +01:00", "+0100".
        var zone = zone
        for name in [" UTC", " GMT", " Z", "Z"] where text.uppercased().hasSuffix(name) {
            text = String(text.dropLast(name.count)).trimmingCharacters(in: .whitespaces)
            zone = TimeZone(identifier: "UTC")!
            break
        }
        if let match = text.wholeMatch(of: /(.+?)\s*([+-])(\d{2}):?(\d{2})/), match.1.contains(" ") || match.1.contains("T"),
           let hours = Int(match.3), let minutes = Int(match.4), hours <= 14, minutes < 60,
           let offset = TimeZone(secondsFromGMT: (match.2 == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)) {
            text = String(match.1)
            zone = offset
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        for format in ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let parsed = formatter.date(from: text) { return parsed }
        }
        return nil
    }
}
