import CofferStorage
import Foundation

/// The PIN of a TPM-sealed key: from the file `$COFFER_TPM_PIN_FILE` (its first line), else
/// asked at the terminal with echo off. Never an argument or a variable's value (other users see
/// arguments in `ps`, and environments leak into child processes and crash reports).
enum TPMPIN {
    /// Reads the PIN to open a key.
    @Sendable static func ask() async throws -> String {
        try read(prompt: "TPM PIN: ", needed: "the key is sealed with a TPM PIN")
    }

    /// Asks for a new PIN, twice at a terminal.
    static func choose() throws -> String {
        let pin = try read(prompt: "New TPM PIN: ", needed: "a new TPM PIN is needed")
        guard !pin.isEmpty else { throw CommandFailure("the PIN is empty; nothing was moved") }
        if ProcessEnvironment.value("COFFER_TPM_PIN_FILE") == nil,
           try HiddenPrompt.read("Repeat the TPM PIN: ") != pin {
            throw CommandFailure("the PINs differ; nothing was moved")
        }
        return pin
    }

    /// The new PIN of `coffer key passwd`: from `file` (`--pin-file`), else asked twice at the
    /// terminal; never from `COFFER_TPM_PIN_FILE`, which gives the current one.
    static func chooseNew(file: String?) throws -> String {
        let pin: String
        if let file {
            pin = try SecretFile.firstLine(of: file, what: "new TPM PIN file")
        } else {
            guard isatty(STDIN_FILENO) == 1 else {
                throw CommandFailure("the new TPM PIN is needed: run this at a terminal, or give it with --pin-file (a 0600 file)")
            }
            pin = try HiddenPrompt.read("New TPM PIN: ")
            if try HiddenPrompt.read("Repeat the new TPM PIN: ") != pin { throw CommandFailure("the PINs differ; nothing was changed") }
        }
        guard !pin.isEmpty else { throw CommandFailure("the new PIN is empty (--no-pin removes the PIN); nothing was changed") }
        return pin
    }

    private static func read(prompt: String, needed: String) throws -> String {
        if let path = ProcessEnvironment.value("COFFER_TPM_PIN_FILE"), !path.isEmpty {
            return try SecretFile.firstLine(of: path, what: "TPM PIN file")
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CommandFailure("\(needed): run this at a terminal, or put the PIN in a 0600 file "
                + "and point COFFER_TPM_PIN_FILE at it")
        }
        return try HiddenPrompt.read(prompt)
    }
}
