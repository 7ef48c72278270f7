import ArgumentParser
import CofferAuthenticator
import Foundation
import CofferStorage

/// The vault formats `coffer export` writes.
enum VaultFormat: String, ExpressibleByArgument, CaseIterable {
    case aegis
}

/// `coffer export FILE --format aegis [--encrypt]`.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the HOTP and TOTP accounts to an Aegis vault.",
        discussion: """
            Without --encrypt the file holds the secrets in the clear (it is still created 0600, \
            atomically: no other user can open it while it is written). \
            With --encrypt it is sealed with your password (scrypt N=2^15, r=8, p=1; AES-256-GCM), \
            as Aegis does. Push mechanisms have no Aegis form and are listed.

            Examples:
              coffer export backup.json --format aegis --encrypt
              COFFER_PASSWORD=... coffer export backup.json --format aegis --encrypt
            """)

    @Argument(help: ArgumentHelp(
        "The file to write (replaced if it exists), or - for standard output.",
        discussion: "Written 0600 from the first byte. A symbolic link or anything but a regular file you own is refused.",
        valueName: "file"))
    var file: String
    @Option(help: "The vault format.") var format: VaultFormat = .aegis
    @Flag(help: "Encrypt the vault with a password.") var encrypt = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open()
            let (entries, notExported) = authenticator.exportAegis()
            // A backup that silently leaves accounts out would replace a good one exactly when
            // it is needed: refuse, as migrate does, and leave the target alone.
            if let unreadable = UnreadableRecords.summary(storage, directory: options.data.directory) {
                throw CommandFailure("nothing was exported (\(file == "-" ? "standard output" : file) was left as it was): \(unreadable)")
            }
            let secret = encrypt ? try password.password(prompt: "New vault password: ", confirm: true) : nil
            if !encrypt {
                StandardStreams.note("coffer: warning: the vault is not encrypted; its secrets are readable by anyone who gets the file")
            }
            // Names as JSON escapes where a terminal would act on them (the same JSON to a parser):
            // the vault may be shown on one (`export -`), or `cat` later.
            let data = Data(TerminalText.jsonEscaped(String(decoding: try AegisVault.write(entries, password: secret), as: UTF8.self)).utf8)
            // The report goes to stderr when the vault itself goes to stdout.
            let toStandardOutput = file == "-"
            func report(_ line: String) {
                if toStandardOutput { StandardStreams.note(line) } else { print(line) }
            }
            if file == "-" {
                try StandardStreams.writeOutput(data)
            } else {
                try PrivateFile.write(data, to: file)
            }
            report("Exported \(entries.count) account(s) to \(file == "-" ? "standard output" : file)\(encrypt ? " (encrypted)" : "").")
            for title in notExported { report("  not exported (no Aegis form): \(title)") }
        }
    }
}
