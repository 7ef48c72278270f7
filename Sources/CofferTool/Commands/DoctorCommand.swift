import ArgumentParser
import CofferAuthenticator
import Foundation
import CofferStorage

/// `coffer doctor`: what works here, and why not.
package struct DoctorCommand: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what works on this machine: keyring, data directory, key store, database, PostgreSQL, sessions.",
        discussion: """
            Prints one line per check, marked ok, note (works, worth knowing) or FAIL, and exits \
            with status 1 when a check fails.

            Example:
              coffer doctor
              coffer doctor --repair
            """)

    @OptionGroup var data: DataOptions

    @Flag(help: ArgumentHelp(
        "Add back the account of every keyring mechanism that has lost it; nothing is removed.",
        discussion: "A mechanism whose account is gone cannot be listed or removed, and blocks adding the account again."))
    var repair = false

    /// How a check came out.
    package enum Outcome: String { case ok, note, fail = "FAIL" }

    package func run() async throws {
        // The sessions are checked by coffer-session: where there are any (or a link in their
        // place), it does the whole check (before any line is printed here). When it cannot be
        // run, every other check still is, and the sessions' line says why.
        var handOffProblem: String?
        if SessionCommands.work == nil, Self.isPresent(SessionCommands.directory(in: data)) {
            do { try SessionHelper.handOff() } catch { handOffProblem = "\(error)" }
        }
        // The PostgreSQL check starts a connection pool: it runs in this command's task group.
        try await CommandServices.running { try await check(handOffProblem: handOffProblem) }
    }

    /// Whether something is at `url`, a dangling link included.
    private static func isPresent(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    private func check(handOffProblem: String?) async throws {
        var failed = false
        func report(_ outcome: Outcome, _ check: String, _ detail: String) {
            if outcome == .fail { failed = true }
            print("\(outcome.rawValue.padding(toLength: 4, withPad: " ", startingAt: 0))  \(check): \(detail)")
        }

        // The keyring.
        if let problem = SecretService.libraryProblem {
            report(.note, "libsecret", problem)
        } else {
            report(.ok, "libsecret", "found")
            switch SecretService(timeout: .seconds(3)).usabilityProblem() {
            case nil: report(.ok, "keyring", "a Secret Service provider answers and its default collection is unlocked")
            case .locked?: report(.note, "keyring", "locked: unlock it to use --backend keychain or keys kept there")
            case let problem?: report(.note, "keyring", problem.errorDescription ?? "\(problem)")
            }
        }

        // Every path Coffer uses here, with its real owner and mode, checked as Coffer checks it
        // before use (FileTrust).
        let directory = data.directory
        func inspect(_ check: String, _ url: URL, _ requirement: FileTrust.Requirement) {
            var info = stat()
            guard lstat(url.path, &info) == 0 else {
                report(.note, check, "\(url.path) does not exist yet; Coffer creates it when it is needed")
                return
            }
            let described = "\(url.path) (owner uid \(info.st_uid), mode \(String(UInt32(info.st_mode) & 0o7777, radix: 8)))"
            do {
                if requirement == .directory { try FileTrust.checkExistingDirectory(url.path) } else { try FileTrust.checkExistingFile(url.path, requirement) }
                report(.ok, check, described)
            } catch {
                report(.fail, check, error.localizedDescription)
            }
        }
        inspect("data directory", directory, .directory)
        inspect("key store record", directory.appendingPathComponent(DefaultAuthenticatorStorage.keyStoreRecord), .file)
        inspect("database file", DefaultAuthenticatorStorage.databaseURL(in: directory), .file)

        // The key store.
        let keyLocation = try? DefaultAuthenticatorStorage.recordedKeyLocation(in: directory)
        await checkTPM(recorded: keyLocation == .tpm, in: directory, report)
        do {
            switch try DefaultAuthenticatorStorage.recordedKeyLocation(in: directory) {
            case .secretService?:
                if let problem = SecretService(timeout: .seconds(3)).usabilityProblem() {
                    report(.fail, "key store", "the OS keyring (recorded in authenticator.keystore), which cannot be used here. "
                        + KeyringAdvice.unreachable(problem))
                } else {
                    report(.ok, "key store", "the OS keyring (recorded in authenticator.keystore)")
                }
            case .file?:
                let keys = FileKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true))
                inspect("key directory", keys.directory, .directory)
                inspect("key file", try keys.fileURL(for: DefaultAuthenticatorStorage.keyAlias), .privateFile)
            case .tpm?:
                let keys = TPMKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true))
                inspect("key directory", keys.directory, .directory)
                inspect("sealed key file", try keys.fileURL(for: DefaultAuthenticatorStorage.keyAlias), .privateFile)
            case .passphrase?:
                let keys = KeyCommand.passphraseStore(in: directory)
                inspect("key directory", keys.directory, .directory)
                inspect("passphrase key file", try keys.fileURL(for: DefaultAuthenticatorStorage.keyAlias), .privateFile)
                if let sealing = try keys.sealing(for: DefaultAuthenticatorStorage.keyAlias) {
                    let p = sealing.parameters
                    let kept = sealing.remember == .zero ? "not remembered"
                        : "remembered \(sealing.remember.components.seconds) s after each use in the kernel keyring, "
                            + (sealing.remembered ? "held now (coffer key forget drops it)" : "not held now")
                    report(.ok, "key store", "under a passphrase (scrypt N=2^\(p.logN), r=\(p.r), p=\(p.p)); \(kept)")
                }
            case nil: report(.note, "key store", "not chosen yet: the keyring when usable at the first coffer add, else a key file")
            }
        } catch {
            report(.fail, "key store", error.localizedDescription)
        }
        await checkKeyCopies(in: directory, report)
        let database = DefaultAuthenticatorStorage.databaseURL(in: directory)
        if FileManager.default.fileExists(atPath: database.path) {
            do {
                let client = try DefaultAuthenticatorStorage.open(directory: directory, tpmPIN: TPMPIN.ask, passphrase: KeyPassphrase.ask,
                                                                  connections: .single)
                let integrity = try client.integrityCheck()
                if integrity == ["ok"] {
                    report(.ok, "database", "\(database.path) passes PRAGMA integrity_check")
                } else {
                    report(.fail, "database", "integrity_check found: \(integrity.prefix(3).joined(separator: "; "))")
                }
                reportRecords(of: client, "accounts", report) { "\($0) account(s)" }
                if let problem = client.keyProblem {
                    report(.fail, "key check", "the key does not open this store, so nothing new is sealed: \((problem as? LocalizedError)?.errorDescription ?? "\(problem)")")
                }
            } catch {
                report(.fail, "database", error.localizedDescription)
            }
        } else {
            report(.note, "database", "no authenticator database yet")
        }
        checkLibrarySearchPath(report)
        checkKeyringAccounts(report)
        checkPostgres(report)
        let sessions = SessionCommands.directory(in: data)
        if let handOffProblem {
            report(.fail, "sessions", "cannot be checked: \(handOffProblem)")
        } else if Self.isPresent(sessions) {
            await SessionCommands.work?.checkSessions(in: sessions, report)
        }
        if failed { throw ExitCode.failure }
    }

    /// Reads every record of `client` (opening every secret, and counting those no account
    /// reaches) and reports under `check`: the accounts, as `described` says, and the records
    /// that cannot be read, with what `hint` says of them after them.
    func reportRecords(of client: any StorageClient & StorageClientDiagnostics, _ check: String, hint: ([String]) -> String = { _ in "" },
                       _ report: (Outcome, String, String) -> Void, described: (Int) -> String) {
        let accounts = client.getAllAccounts()
        for account in accounts { _ = client.getMechanismsForAccount(account: account) }
        _ = client.getAllNotifications()
        let unreadable = client.unreadableRecords
        report(unreadable.isEmpty ? .ok : .fail, check, described(accounts.count) + (unreadable.isEmpty ? "" :
            ", \(client.unreadableRecordCount) stored record(s) cannot be read, left as they are: "
            + unreadable.prefix(3).joined(separator: "; ") + hint(unreadable)))
    }
}
