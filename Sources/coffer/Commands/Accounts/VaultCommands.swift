import ArgumentParser
import CofferAuthenticator
import Foundation
import CofferStorage

/// The vault formats `coffer import` and `coffer export` speak.
enum VaultFormat: String, ExpressibleByArgument, CaseIterable {
    case aegis
}

/// Where a vault password comes from: `--password-file`, else `COFFER_PASSWORD`, else a prompt
/// with echo off. Never a command-line argument (other users see those in `ps`).
struct PasswordOptions: ParsableArguments {
    @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the vault password from this file (first line).", valueName: "path"))
    var passwordFile: String?

    /// The password, from `--password-file`, `COFFER_PASSWORD` or a prompt. `confirm` (for a
    /// new vault) asks twice and warns about a short password.
    func password(prompt: String, confirm: Bool) throws -> String {
        let password = try read(prompt: prompt, confirm: confirm)
        // An empty password would "encrypt" a vault that anyone can open.
        guard !password.isEmpty else { throw CommandFailure("the password is empty; nothing was written") }
        if confirm, password.count < 8 {
            StandardStreams.note("coffer: warning: the password is shorter than 8 characters; the vault is easy to guess open")
        }
        return password
    }

    private func read(prompt: String, confirm: Bool) throws -> String {
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw CommandFailure("cannot read the password file \(passwordFile)")
            }
            // The first line, without its line ending: Swift reads \r\n as one Character, so
            // splitting on "\n" would keep it whole; split on any line break.
            return String(text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? "")
        }
        if let variable = ProcessInfo.processInfo.environment["COFFER_PASSWORD"] { return variable }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CommandFailure("a password is needed: give --password-file or set COFFER_PASSWORD (there is no terminal to ask on)")
        }
        let first = try HiddenPrompt.read(prompt)
        if confirm {
            guard try HiddenPrompt.read("Repeat the password: ") == first else { throw CommandFailure("the passwords differ; nothing was written") }
        }
        return first
    }
}

/// `coffer import FILE --format aegis`.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import accounts from an Aegis vault (plain or encrypted).",
        discussion: """
            Every entry is checked before anything is stored: a wrong password, a damaged file or \
            an unknown vault version changes nothing. Entries whose account already has that kind \
            of mechanism are skipped and listed (--overwrite replaces them); entry types Coffer does \
            not support (steam, motp, yandex) are listed, not silently dropped.

            Examples:
              coffer import aegis-backup.json --format aegis
              coffer import aegis.json --password-file ~/.vault-password --overwrite
            """)

    @Argument(help: "The vault file.") var file: String
    @Option(help: "The vault format.") var format: VaultFormat = .aegis
    @Flag(help: "Replace mechanisms that already exist.") var overwrite = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            guard let data = FileManager.default.contents(atPath: file) else { throw CommandFailure("cannot read \(file)") }
            var entries: [AegisVault.Entry]
            do {
                entries = try AegisVault.read(data, password: nil)
            } catch AegisVault.VaultError.passwordRequired {
                entries = try AegisVault.read(data, password: try password.password(prompt: "Vault password: ", confirm: false))
            }
            let (authenticator, _) = try options.open()
            let report = try authenticator.importAegis(entries, overwrite: overwrite)
            print("Imported \(report.imported.count) account(s).")
            for title in report.imported where !report.renumbered.contains(title) { print("  imported: \(title)") }
            for title in report.renumbered { print("  imported under a new id (its id belongs to another stored account): \(title)") }
            for title in report.skippedExisting { print("  skipped (already there; --overwrite replaces): \(title)") }
            for title in report.unsupported { print("  not imported (type not supported): \(title)") }
        }
    }
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
            let data = try AegisVault.write(entries, password: secret)
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
