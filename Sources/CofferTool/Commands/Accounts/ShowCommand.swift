import ArgumentParser
import CofferAuthenticator
import CofferStorage
import Foundation

/// `coffer show QUERY --uri|--qr`: an account as a phone scans it.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show an account as an otpauth:// URI or a QR code, to move it to a phone, or show its note.",
        discussion: """
            Both forms hold the secret: anyone who sees them can make your codes. At a \
            terminal you are asked first (--yes skips the question). Push mechanisms cannot be \
            moved this way; register the device with the issuer again.

            --note prints the note an import brought (Aegis, Bitwarden), with the account's \
            groups; notes often hold recovery codes, so it asks the same way.

            Examples:
              coffer show github --qr
              coffer show github --note
              coffer show 'GitHub: alice' --uri --yes | qrencode -t ansiutf8
            """)

    @Argument(help: ArgumentHelp("Which account (must match exactly one).", valueName: "query"), completion: .custom(AccountCompletion.titles))
    var query: String
    @Flag(help: "Print the otpauth:// URI.") var uri = false
    @Flag(help: "Draw the QR code in the terminal.") var qr = false
    @Flag(help: "Print the account's note, groups, favourite mark and icon name, as an import brought them.") var note = false
    @Flag(name: .shortAndLong, help: "Do not ask before showing the secret.") var yes = false
    @OptionGroup var options: AuthenticatorOptions

    func validate() throws {
        guard [uri, qr, note].filter({ $0 }).count == 1 else { throw ValidationError("choose one of --uri, --qr and --note") }
    }

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open()
            let entry = try AccountQuery.one(AccountQuery.entries(matching: query, authenticator, storage, whole: options.data.directory), query: query)
            let movable = entry.mechanisms.filter { $0.type != .push }
            if note {
                guard let details = entry.account.details else {
                    throw CommandFailure("\(AccountQuery.title(entry.account)) has no note, groups or favourite mark")
                }
                if details.note != nil {
                    try Terminal.confirmShowingSecrets("This shows the note of \(AccountQuery.title(entry.account)), which may hold recovery codes. "
                        + "Show it? [y/N] ", yes: yes)
                }
                if !details.groups.isEmpty { print("groups: " + details.groups.map { TerminalText.escaped($0) }.joined(separator: ", ")) }
                if details.isFavorite { print("favourite") }
                if let icon = details.icon { print("icon: \(TerminalText.escaped(icon))") }
                if let text = details.note {
                    print(text.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalText.escaped(String($0)) }.joined(separator: "\n"))
                } else {
                    print("(no note)")
                }
                return
            }
            guard !movable.isEmpty else {
                throw CommandFailure("\(AccountQuery.title(entry.account)) has only a push mechanism, which cannot be moved by URI; register the device with the issuer again")
            }
            // The secret would appear on a screen: ask the person at it, on the terminal itself
            // (standard input may be a pipe that answers for them).
            try Terminal.confirmShowingSecrets("This shows the secret of \(AccountQuery.title(entry.account)): anyone who sees it can make your codes. Show it? [y/N] ", yes: yes)
            for mechanism in movable {
                // The names shown here, so the phone shows what coffer list shows.
                var shown = mechanism
                shown.issuer = entry.account.shownIssuer
                shown.accountName = entry.account.shownAccountName
                let text = MechanismURI.otpauth(shown)
                if uri {
                    print(text)
                } else {
                    for line in try TerminalQRCode.lines(for: text) { StandardStreams.control(line + "\n") }
                    print("\(AccountQuery.title(entry.account)) (\(mechanism.type.rawValue.uppercased()))")
                }
            }
        }
    }
}
