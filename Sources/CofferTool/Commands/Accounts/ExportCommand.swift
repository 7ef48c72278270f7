import ArgumentParser
import CofferAuthenticator
import Foundation
import CofferStorage

/// The library's formats, as `--format` takes them.
extension ExportFormat: ExpressibleByArgument {}

/// `coffer export FILE [--format aegis|uris|qr|google] [--encrypt]`.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the HOTP and TOTP accounts: an Aegis vault, otpauth:// URIs, QR codes, or Google Authenticator's transfer codes.",
        discussion: """
            aegis (the default) writes an Aegis vault; with --encrypt it is sealed with your \
            password (scrypt N=2^15, r=8, p=1; AES-256-GCM), as Aegis does. uris writes one \
            otpauth:// URI per line. qr writes one PNG per account into DIR, a new directory \
            (0700). google draws Google Authenticator's transfer QR codes in the terminal (FILE \
            is -; piped, the otpauth-migration:// lines are printed) or writes them as PNGs into a \
            new DIR; Google's format has no period, no Steam codes and no 7 digits, and such \
            accounts are listed, not changed. Only aegis can be encrypted: the others hold the \
            secrets in the clear, and say so. Every file is 0600 from its first byte, written \
            atomically. Push mechanisms cannot be exported and are listed. Printed to a \
            terminal (-, not encrypted), the secrets are shown only once you say yes, as show \
            --uri asks; into a file or a pipe nothing is asked.

            Examples:
              coffer export backup.json --encrypt
              coffer export - --format uris > otp.txt     # pass-otp, 2fa, cotp
              coffer export phone-codes --format qr        # a new directory of PNGs
              coffer export - --format google              # scan with Google Authenticator
            """)

    @Argument(help: ArgumentHelp(
        "The file to write (replaced if it exists), or - for standard output; with --format qr (or google), a new directory.",
        discussion: "Written 0600 from the first byte. A symbolic link or anything but a regular file you own is refused.",
        valueName: "file|dir"))
    var file: String
    @Option(help: "The format.") var format: ExportFormat = .aegis
    @Flag(help: "Encrypt the vault with a password (aegis only).") var encrypt = false
    @Flag(name: .shortAndLong, help: "Do not ask before printing the secrets at a terminal (with - as the file).") var yes = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var options: AuthenticatorOptions

    func validate() throws {
        if encrypt, format != .aegis { throw ValidationError("only --format aegis can be encrypted") }
        if format == .qr, file == "-" { throw ValidationError("--format qr writes PNG files: name a new directory") }
    }

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open()
            let exported = await authenticator.exportAccounts()
            // A backup that silently leaves accounts out would replace a good one exactly when
            // it is needed: refuse, as migrate does, and leave the target alone.
            if let unreadable = UnreadableRecords.failure(storage, directory: options.data.directory) {
                throw CommandFailure("nothing was exported (\(file == "-" ? "standard output" : file) was left as it was): \(unreadable)", status: unreadable.status)
            }
            if file == "-", !encrypt {
                try Terminal.confirmShowingSecrets("This prints the secrets of \(exported.accounts.count) account(s): anyone who sees "
                    + "them can make your codes. Print them? [y/N] ", yes: yes)
            }
            let secret = encrypt ? try password.password(prompt: "New vault password: ", confirm: true) : nil
            try ExportFormats(file: file, format: format).write(exported.accounts, notExported: exported.notExported, password: secret)
        }
    }
}
