import ArgumentParser
import CofferAuthenticator
import Foundation
import CofferStorage

/// `coffer doctor`: what works here, and why not.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what works on this machine: keyring, data directory, key store, database.",
        discussion: """
            Prints one line per check, marked ok, note (works, worth knowing) or FAIL, and exits \
            with status 1 when a check fails.

            Example:
              coffer doctor
            """)

    @OptionGroup var data: DataOptions

    enum Outcome: String { case ok, note, fail = "FAIL" }

    func run() async throws {
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

        // The data directory.
        let directory = data.directory
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue {
            let mode = ((try? FileManager.default.attributesOfItem(atPath: directory.path))?[.posixPermissions] as? NSNumber)?.intValue ?? 0
            if mode & 0o077 != 0 {
                report(.fail, "data directory", "\(directory.path) is mode \(String(mode & 0o777, radix: 8)); others can read it. Run: chmod 700 '\(directory.path)'")
            } else {
                report(.ok, "data directory", "\(directory.path) (mode \(String(mode & 0o777, radix: 8)))")
            }
        } else {
            report(.note, "data directory", "\(directory.path) does not exist yet; the first coffer add creates it")
        }

        // The key store and the database.
        do {
            switch try DefaultAuthenticatorStorage.recordedKeyLocation(in: directory) {
            case .secretService?: report(.ok, "key store", "the OS keyring (recorded in authenticator.keystore)")
            case .file?: report(.ok, "key store", "a 0600 file in \(directory.appendingPathComponent("keys").path)")
            case nil: report(.note, "key store", "not chosen yet: the keyring when usable at the first coffer add, else a key file")
            }
        } catch {
            report(.fail, "key store", error.localizedDescription)
        }
        let database = DefaultAuthenticatorStorage.databaseURL(in: directory)
        if FileManager.default.fileExists(atPath: database.path) {
            do {
                let client = try DefaultAuthenticatorStorage.open(directory: directory)
                let integrity = try client.integrityCheck()
                if integrity == ["ok"] {
                    report(.ok, "database", "\(database.path) passes PRAGMA integrity_check")
                } else {
                    report(.fail, "database", "integrity_check found: \(integrity.prefix(3).joined(separator: "; "))")
                }
                let accounts = client.getAllAccounts()
                for account in accounts { _ = client.getMechanismsForAccount(account: account) }  // reads every secret
                let unreadable = client.unreadableRecordCount
                report(unreadable == 0 ? .ok : .fail, "accounts",
                       "\(accounts.count) account(s)" + (unreadable == 0 ? "" : ", \(unreadable) mechanism(s) cannot be decrypted with the recorded key"))
            } catch {
                report(.fail, "database", error.localizedDescription)
            }
        } else {
            report(.note, "database", "no authenticator database yet")
        }
        if failed { throw ExitCode.failure }
    }
}
