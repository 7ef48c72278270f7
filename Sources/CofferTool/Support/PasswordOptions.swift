import ArgumentParser
import CofferStorage
import Foundation

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
        if let variable = ProcessEnvironment.value("COFFER_PASSWORD") { return variable }
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
