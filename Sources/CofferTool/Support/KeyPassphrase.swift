import CofferStorage
import Foundation

/// The passphrase of a passphrase-sealed key (`coffer key move --to passphrase`): from the file
/// `$COFFER_KEY_PASSWORD_FILE` (its first line), else `$COFFER_KEY_PASSWORD`, else asked at the
/// terminal with echo off. Never an argument. Distinct from the vault password (`COFFER_PASSWORD`),
/// so an encrypted export never reuses the key's passphrase by accident.
enum KeyPassphrase {
    /// Reads the passphrase to open the key.
    @Sendable static func ask() async throws -> String {
        try read(prompt: "Passphrase of the accounts' key: ", file: nil,
                 needed: "the accounts' key is under a passphrase")
    }

    /// A new passphrase: from `file` (`--password-file`) or the usual sources; asked twice at a
    /// terminal. Refuses an empty one and warns about a short one.
    static func choose(file: String?) throws -> String {
        let passphrase = try read(prompt: "New passphrase for the accounts' key: ", file: file,
                                  needed: "a passphrase for the key is needed")
        guard !passphrase.isEmpty else { throw CommandFailure("the passphrase is empty; nothing was moved") }
        if file == nil, ProcessEnvironment.value("COFFER_KEY_PASSWORD_FILE") == nil,
           ProcessEnvironment.value("COFFER_KEY_PASSWORD") == nil,
           try HiddenPrompt.read("Repeat the passphrase: ") != passphrase {
            throw CommandFailure("the passphrases differ; nothing was moved")
        }
        if passphrase.count < 10 {
            StandardStreams.note("coffer: warning: the passphrase is shorter than 10 characters; whoever copies the key file can guess it")
        }
        return passphrase
    }

    /// The new passphrase of `coffer key passwd`: from `file` (`--password-file`), else asked
    /// twice at the terminal; never from the variables, which give the current one. Refuses an
    /// empty one and warns about a short one.
    static func chooseNew(file: String?) throws -> String {
        let passphrase = try read(prompt: "New passphrase for the accounts' key: ", file: file,
                                  needed: "the new passphrase is needed (--password-file gives it to a script)", environment: false)
        guard !passphrase.isEmpty else { throw CommandFailure("the new passphrase is empty; nothing was changed") }
        if file == nil, try HiddenPrompt.read("Repeat the new passphrase: ") != passphrase {
            throw CommandFailure("the passphrases differ; nothing was changed")
        }
        if passphrase.count < 10 {
            StandardStreams.note("coffer: warning: the passphrase is shorter than 10 characters; whoever copies the key file can guess it")
        }
        return passphrase
    }

    /// The current passphrase, asked afresh before it is changed (a remembered key is not enough).
    @Sendable static func askCurrent() async throws -> String {
        try read(prompt: "Current passphrase of the accounts' key: ", file: nil, needed: "the current passphrase is needed")
    }

    private static func read(prompt: String, file: String?, needed: String, environment useEnvironment: Bool = true) throws -> String {
        let environment = { (name: String) in useEnvironment ? ProcessEnvironment.value(name) : nil }
        if let path = file ?? environment("COFFER_KEY_PASSWORD_FILE").flatMap({ $0.isEmpty ? nil : $0 }) {
            return try SecretFile.firstLine(of: path, what: "passphrase file")
        }
        if let value = environment("COFFER_KEY_PASSWORD") { return value }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CommandFailure("\(needed): run this at a terminal, or point COFFER_KEY_PASSWORD_FILE at a 0600 file that holds it")
        }
        return try HiddenPrompt.read(prompt)
    }
}

/// A file that holds one secret (a passphrase, a PIN) on its first line.
enum SecretFile {
    /// The first line of `path`, without its line ending. The file is one of secrets: yours, not
    /// readable or writable by anyone else, and small (``PrivateFile/read(_:limit:)``).
    static func firstLine(of path: String, what: String) throws -> String {
        let data: Data?
        do {
            data = try PrivateFile.read(path, limit: 64 << 10)
        } catch {
            throw CommandFailure("the \(what) \(path) cannot be used: \(error.errorDescription ?? "\(error)")")
        }
        guard let data else { throw CommandFailure("there is no \(what) at \(path)") }
        // Swift reads \r\n as one Character, so split on any line break, not on "\n".
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? "")
    }
}

/// A duration as people write it: `90s`, `30m`, `8h`, `1d` (a bare number is seconds).
enum HumanDuration {
    static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let last = text.last else { return nil }
        if let unit = units[last], let value = Int(text.dropLast()), value >= 0 {
            let (seconds, overflow) = value.multipliedReportingOverflow(by: unit)
            return overflow ? nil : seconds
        }
        return Int(text).flatMap { $0 >= 0 ? $0 : nil }
    }
}
