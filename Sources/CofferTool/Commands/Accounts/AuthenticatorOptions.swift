import ArgumentParser
import CofferAuthenticator
import CofferMFAEngine
import Foundation
import Logging
import CofferStorage

/// `--backend sqlite|keychain|postgres`: the library's `AuthenticatorBackend`.
extension AuthenticatorBackend: ExpressibleByArgument {}

/// Options of every command that reads or changes accounts.
struct AuthenticatorOptions: ParsableArguments {
    @OptionGroup var data: DataOptions

    @Option(
        name: .customLong("backend"),
        help: ArgumentHelp(
            "Where accounts are kept: sqlite (a file in the data directory, works everywhere), keychain (the OS keyring) or postgres.",
            discussion: """
                Defaults to $COFFER_BACKEND, else the backend recorded in the data directory by coffer migrate, else sqlite. \
                postgres reads the database URL from $COFFER_DATABASE_URL, the key-encryption key from the file \
                $COFFER_DATABASE_KEK (default keys/postgres.kek in the data directory; 'keyring' for the OS keyring), \
                and whose accounts from $COFFER_OWNER (default your login name).
                """,
            valueName: "sqlite|keychain|postgres"))
    var explicitBackend: AuthenticatorBackend?

    /// The backend in effect: `--backend`, `$COFFER_BACKEND`, the one recorded in the data
    /// directory by `coffer migrate`, or sqlite (the library's `AuthenticatorBackend.chosen`).
    func backend() throws -> AuthenticatorBackend {
        try AuthenticatorBackend.chosen(explicit: explicitBackend, directory: data.directory)
    }

    /// Where the chosen backend keeps accounts, in words.
    func location() throws -> String {
        switch try backend() {
        case .sqlite: DefaultAuthenticatorStorage.databaseURL(in: data.directory).path
        case .keychain: "the OS keyring (service org.coffer.authenticator.*)"
        case .postgres: "the PostgreSQL database \(try PostgresBackend.url()) (owner \(PostgresBackend.owner()))"
        }
    }

    /// Where the accounts' key is recorded now (`nil` before the first account): taken before a
    /// command that may make the key, for ``noteNewKeyFile(before:)``.
    func recordedKeyLocation() -> KeyStoreSelection.Location? {
        guard (try? backend()) == .sqlite else { return nil }
        return try? DefaultAuthenticatorStorage.recordedKeyLocation(in: data.directory)
    }

    /// Says, once, where the accounts' key went when this command made it in a file (there was
    /// no keyring session): where it is, and how to keep it off the disk in the clear.
    func noteNewKeyFile(before: KeyStoreSelection.Location?) {
        guard before == nil, recordedKeyLocation() == .file,
              let file = try? FileKeyStore(directory: data.directory.appendingPathComponent("keys", isDirectory: true))
                  .fileURL(for: DefaultAuthenticatorStorage.keyAlias),
              FileManager.default.fileExists(atPath: file.path) else { return }
        StandardStreams.note("coffer: note: with no keyring here, the accounts' key was made in the file \(file.path) (0600); "
            + "to keep it off the disk in the clear: coffer key move --to tpm (or --to passphrase)")
    }

    /// Opens the storage client (of the chosen backend, or `backend`) and an authenticator over it.
    ///
    /// - Parameter keyless: For a command that needs no secret (`list`): a SQLite store whose key
    ///   is in a keyring this session cannot reach opens all the same, with every sealed field
    ///   closed and `keyProblem` saying why.
    func open(backend chosen: AuthenticatorBackend? = nil, keyless: Bool = false) throws -> (AuthenticatorClient, any StorageClient) {
        let store = try openStore(backend: chosen, keyless: keyless)
        // The library keeps the rules (the HOTP counter floor over the store's ledger and what
        // its trash keeps); the tool only words a trash that cannot be read.
        var remembered: (@Sendable () throws -> [Mechanism])?
        if let trash = store.trash as? SealedTrashDirectory {
            remembered = {
                do {
                    return try trash.entries().flatMap(\.mechanisms)
                } catch {
                    throw CommandFailure("Fix or move aside the trash \(trash.directory.path) (coffer trash says what is wrong): it cannot "
                        + "be read (\((error as? LocalizedError)?.errorDescription ?? "\(error)")), and the HOTP counters it keeps are needed "
                        + "before a HOTP account is added.", status: ExitStatus.of(error))
                }
            }
        }
        return (store.makeClient(remembered: remembered, logger: Logger(label: "coffer")), store.storage)
    }

    /// Opens the store of the chosen backend (or `backend`) with its ledger and trash, through
    /// the library's `AuthenticatorBackend.open`; the tool adds its prompts, the finishing of a
    /// killed key move with a note, and (for `keyless`) a SQLite store whose key is unreachable.
    ///
    /// - Parameter keyless: For a command that needs no secret (`list`): a SQLite store whose key
    ///   is in a keyring this session cannot reach opens all the same, with every sealed field
    ///   closed and `keyProblem` saying why.
    func openStore(backend chosen: AuthenticatorBackend? = nil, keyless: Bool = false) throws -> AuthenticatorStore {
        let logger = Logger(label: "coffer")
        let backend = try chosen ?? backend()
        // Only the SQLite store keeps a trash: a bad COFFER_TRASH_DAYS does not stop the others.
        let trashDays = backend == .sqlite ? try ToolTrash.keepDays : 0
        if backend == .sqlite {
            Self.finishInterruptedKeyMove(in: data.directory)
            if (try? DefaultAuthenticatorStorage.recordedKeyLocation(in: data.directory)) == .tpm { TPMNetworkWarning.warnIfNetwork() }
        }
        do {
            // One connection: a command is a short-lived process (nothing written to open it).
            return try backend.open(directory: data.directory, logger: logger, tpmPIN: TPMPIN.ask, passphrase: KeyPassphrase.ask,
                                    trashDays: trashDays, postgres: { try PostgresBackend.open(directory: data.directory, logger: logger) },
                                    connections: .single)
        } catch KeyStoreSelection.SelectionError.keyringRequired(let keyring) {
            let failure = CommandFailure(KeyringAdvice.unreachable(keyring), status: ExitStatus.of(keyring))
            let path = DefaultAuthenticatorStorage.databaseURL(in: data.directory).path
            guard keyless, FileManager.default.fileExists(atPath: path) else { throw failure }
            let storage = try SQLiteStorageClient(path: path, encryptor: UnreachableKey(reason: KeyringUnreachable(advice: failure.description)),
                                                  logger: logger, connections: .single)
            return AuthenticatorStore(sqlite: storage, directory: data.directory, trashDays: trashDays)
        }
    }
}

extension AuthenticatorOptions {
    /// Finishes (or rolls back) a key move a killed process left, saying what was done; when it
    /// cannot be done now (the keyring not answering), says where the leftover copy is. The
    /// command goes on either way: the key is where the record says.
    static func finishInterruptedKeyMove(in directory: URL) {
        // The key stores can ask for a PIN or passphrase: a copy is deleted only once it is
        // shown to be the same key as the one kept.
        let move = DefaultAuthenticatorStorage.keyMove(in: directory, tpmPIN: TPMPIN.ask, passphrase: KeyPassphrase.ask)
        do {
            if let recovery = try SyncBridge.run({ try await move.finishInterrupted(waitingAtMost: .milliseconds(300)) }) {
                StandardStreams.note("coffer: note: \(KeyCommand.describe(recovery))")
            }
        } catch KeyMove.Failure.busy {
            // A move under way holds the lock, and finishes itself; or a command that uses the
            // accounts does, and a later command finishes this one.
            StandardStreams.note("coffer: note: a key move is under way (or was interrupted while another command uses the accounts); "
                + "it is finished by the first command that can (coffer doctor says)")
        } catch {
            let interrupted = try? move.interrupted()
            StandardStreams.note("coffer: warning: a key move was interrupted"
                + (interrupted.map { " (from \($0.from.rawValue) to \($0.to.rawValue))" } ?? "")
                + " and cannot be finished now: \((error as? LocalizedError)?.errorDescription ?? "\(error)"); "
                + "a copy of the key is left where the record does not say it is, until a command can finish it (coffer doctor)")
        }
    }
}

/// Writes JSON for `--json` output. `JSONEncoder` escapes C0 controls inside strings; the
/// other characters `TerminalText` escapes (DEL, C1 controls, bidirectional overrides,
/// separators) are written as `\uXXXX` escapes too, so the JSON means the same and a terminal
/// showing it sees none of them.
enum JSONOutput {
    static func print<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        Swift.print(TerminalText.jsonEscaped(String(decoding: try encoder.encode(value), as: UTF8.self)))
    }
}

/// What a command says when stored records cannot be read, instead of acting as if they were
/// not there.
enum UnreadableRecords {
    /// "N stored record(s) cannot be read: why", or `nil` when every record read so far could be.
    /// Its exit status is the cause's (``ExitStatus/of(_:)``): a TPM or keyring that did not
    /// answer is ``ExitStatus/unavailable``, as in every other command.
    static func failure(_ storage: any StorageClient, directory: URL) -> CommandFailure? {
        guard let diagnostics = storage as? any StorageClientDiagnostics, diagnostics.unreadableRecordCount > 0 else { return nil }
        let cause = (storage as? SQLiteStorageClient)?.keyProblem ?? diagnostics.lastError
        return summary(storage, diagnostics, directory: directory).map { CommandFailure($0, status: cause.map(ExitStatus.of) ?? .failed) }
    }

    private static func summary(_ storage: any StorageClient, _ diagnostics: any StorageClientDiagnostics, directory: URL) -> String? {
        let count = diagnostics.unreadableRecordCount
        var why = diagnostics.lastError.map { error in
            // What happened to the records, in words without their internal paths and ids.
            Self.recordProblem(in: error) ?? (error as? LocalizedError)?.errorDescription ?? "\(error)"
        } ?? "unknown"
        if let sqlite = storage as? SQLiteStorageClient, let problem = sqlite.keyProblem {
            if let advice = firstCause(in: problem, { ($0 as? KeyringUnreachable)?.advice }) {
                return "\(advice) Until then \(count) stored record(s) stay sealed."
            }
            if let file = Self.fileProblem(in: problem) {
                // What to do about the key's file leads; no record ids, no nested causes.
                return "\(file) Until then the accounts' key cannot be opened; \(count) stored record(s) are left as they are."
            }
            if let reason = Self.keyProblem(in: problem) {
                // The key store's own words lead: they say what to do (a PIN, a passphrase, a
                // lockout, another TPM).
                return "the accounts' key cannot be opened now: \(reason) (\(count) stored record(s) are left as they are)"
            }
            if (try? DefaultAuthenticatorStorage.recordedKeyLocation(in: directory)) == .file,
               let keyFile = try? FileKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true))
                   .fileURL(for: DefaultAuthenticatorStorage.keyAlias),
               !FileManager.default.fileExists(atPath: keyFile.path) {
                why = "the key file \(keyFile.path) is missing"
            } else {
                why = "the store's key cannot be used (\(why))"
            }
        }
        if why.hasSuffix(".") { why.removeLast() }
        return "\(count) stored record(s) cannot be read: \(why). They are left as they are: restore the key "
            + "or the records (see coffer doctor)."
    }
}

extension UnreadableRecords {
    /// What to do about a key that does not open the store, in one sentence that leads with
    /// the fix: the file to restore or fix, the TPM's or key store's own words, or to restore
    /// the key.
    static func keyAdvice(_ cause: any Error) -> String {
        if let file = fileProblem(in: cause) { return file }
        if let reason = keyProblem(in: cause) {
            return "The accounts' key cannot be opened now: \(reason.hasSuffix(".") ? String(reason.dropLast()) : reason)."
        }
        return "Restore the accounts' key (coffer doctor says what is wrong with it): it does not open this store."
    }

    /// A file or directory of the key store that Coffer refused or could not open (its mode,
    /// owner, a link, a missing directory), somewhere inside `error`: its advice, which leads
    /// with what to do.
    static func fileProblem(in error: Any) -> String? {
        firstCause(in: error) { cause in
            guard let found = cause as? StorageError else { return nil }
            switch found {
            case .untrusted, .io: return found.description
            default: return nil
            }
        }
    }

    /// What is wrong with a record itself (copied between records, damaged, sealed under another
    /// key), said without the record's internal path, which names its id and columns.
    static func recordProblem(in error: Any) -> String? {
        firstCause(in: error) { cause in
            switch cause as? StorageError {
            case .identityMismatch?: "they were copied or swapped between records outside Coffer"
            case .corrupted(_, let reason)?: reason  // what is wrong, without where
            case .decryptionFailed?: "they do not open with the accounts' key (damaged, or sealed under another key)"
            case .keyMissing?: "they are sealed under a key the key store no longer holds"
            default: nil
            }
        }
    }

    /// The TPM's refusal, a wrong passphrase, or a missing PIN or passphrase, somewhere inside
    /// `error` (wrapped by the sealing and storage layers), in words.
    static func keyProblem(in error: Any) -> String? {
        firstCause(in: error) { cause in
            switch cause {
            case let found as TPMError: found.description
            case let found as CommandFailure: found.description
            case let found as WrappedKeyRingError: found.description
            default: nil
            }
        }
    }

    /// The words `describe` gives for the first of `error` and its causes (its children, as
    /// the sealing and storage layers wrap them, up to 8 levels down) that it describes.
    private static func firstCause(in error: Any, depth: Int = 0, _ describe: (Any) -> String?) -> String? {
        if let found = describe(error) { return found }
        guard depth < 8 else { return nil }
        for child in Mirror(reflecting: error).children {
            if let found = firstCause(in: child.value, depth: depth + 1, describe) { return found }
        }
        return nil
    }
}

/// What to do when the accounts' key is in a keyring this session cannot reach.
enum KeyringAdvice {
    /// What to do first, then why, in one line: the keyring's own advice speaks of the
    /// library's backends, not of this tool's commands.
    static func unreachable(_ keyring: KeychainError) -> String {
        let elsewhere = "Run coffer in your desktop session, or run `coffer key move --to file` there once to use the accounts from anywhere"
        switch keyring {
        case .unavailable where ProcessEnvironment.value("DBUS_SESSION_BUS_ADDRESS") == nil:
            return "\(elsewhere): their key is in the OS keyring, and this session has no D-Bus session bus (over SSH, under cron, in a container)."
        case .unavailable:
            return "\(elsewhere): their key is in the OS keyring, and no keyring answers on this session's bus."
        case .locked:
            return "Unlock your keyring (log in to your desktop session, or unlock it in Seahorse or KeePassXC) and try again: the accounts' key is in it."
        case .timedOut:
            return "Check that your keyring (gnome-keyring, KeePassXC) is running and not waiting on a prompt, then try again: the accounts' key is in it, and it did not answer in time."
        case .ambiguous, .failed:
            return "\(elsewhere): their key is in the OS keyring, which failed: \(keyring.errorDescription ?? "\(keyring)")"
        }
    }
}

/// The accounts' key is in a keyring this session cannot reach; `advice` is
/// ``KeyringAdvice/unreachable(_:)``'s.
struct KeyringUnreachable: Error {
    let advice: String
}

/// The encryptor of a store opened without its key (``AuthenticatorOptions/open(backend:keyless:)``):
/// everything sealed stays closed, for `reason`.
private struct UnreachableKey: Encryptor {
    let reason: KeyringUnreachable

    func encrypt(data: Data) async throws -> Data { throw reason }
    func decrypt(data: Data) async throws -> Data { throw reason }
}
