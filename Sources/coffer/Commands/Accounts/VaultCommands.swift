import ArgumentParser
import CofferAuthenticator
import Foundation

/// The vault formats `coffer import` and `coffer export` speak.
enum VaultFormat: String, ExpressibleByArgument, CaseIterable {
    case aegis
}

/// Where a vault password comes from: `--password-file`, else `COFFER_PASSWORD`, else a prompt
/// with echo off. Never a command-line argument (other users see those in `ps`).
struct PasswordOptions: ParsableArguments {
    @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the vault password from this file (first line).", valueName: "path"))
    var passwordFile: String?

    func password(prompt: String, confirm: Bool) throws -> String {
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw CommandFailure("cannot read the password file \(passwordFile)")
            }
            return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        if let variable = ProcessInfo.processInfo.environment["COFFER_PASSWORD"] { return variable }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CommandFailure("a password is needed: give --password-file or set COFFER_PASSWORD (there is no terminal to ask on)")
        }
        let first = try Self.prompt(prompt)
        if confirm {
            guard try Self.prompt("Repeat the password: ") == first else { throw CommandFailure("the passwords differ; nothing was written") }
        }
        return first
    }

    /// Reads a line from the terminal with echo off.
    private static func prompt(_ text: String) throws -> String {
        FileHandle.standardError.write(Data(text.utf8))
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        guard let line = readLine(strippingNewline: true) else { throw CommandFailure("no password was entered") }
        return line
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
              coffer import aegis-backup.json --format aegis --password-file ~/.vault-password --overwrite
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
            for title in report.imported { print("  imported: \(title)") }
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
            Without --encrypt the file holds the secrets in the clear (it is still created 0600). \
            With --encrypt it is sealed with your password (scrypt N=2^15, r=8, p=1; AES-256-GCM), \
            as Aegis does. Push mechanisms have no Aegis form and are listed.

            Examples:
              coffer export backup.json --format aegis --encrypt
              COFFER_PASSWORD=... coffer export backup.json --format aegis --encrypt
            """)

    @Argument(help: "The file to write (replaced if it exists).") var file: String
    @Option(help: "The vault format.") var format: VaultFormat = .aegis
    @Flag(help: "Encrypt the vault with a password.") var encrypt = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            let (authenticator, _) = try options.open()
            let (entries, notExported) = authenticator.exportAegis()
            let secret = encrypt ? try password.password(prompt: "New vault password: ", confirm: true) : nil
            if !encrypt {
                FileHandle.standardError.write(Data("coffer: warning: the vault is not encrypted; its secrets are readable by anyone who gets the file\n".utf8))
            }
            let data = try AegisVault.write(entries, password: secret)
            let temporary = file + ".coffer-tmp"
            guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw CommandFailure("cannot write \(file)")
            }
            guard rename(temporary, file) == 0 else {
                unlink(temporary)
                throw CommandFailure("cannot write \(file): \(String(cString: strerror(errno)))")
            }
            print("Exported \(entries.count) account(s) to \(file)\(encrypt ? " (encrypted)" : "").")
            for title in notExported { print("  not exported (no Aegis form): \(title)") }
        }
    }
}
