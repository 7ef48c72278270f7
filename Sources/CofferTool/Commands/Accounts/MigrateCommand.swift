import ArgumentParser
import CofferAuthenticator
import Foundation

/// `coffer migrate --to keychain|sqlite`.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Move every account from one backend to the other.",
        discussion: """
            Copies everything to the target, reads it all back and compares, and only then removes \
            it from the source. If anything differs, or the target already holds one of the \
            accounts, the source is left as it was.

            Examples:
              coffer migrate --to keychain        # from the SQLite file to the keyring
              coffer migrate --backend keychain --to sqlite
            """)

    @Option(help: "The backend to move to.") var to: AuthenticatorBackend
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            let from = try options.backend()
            guard from != to else { throw CommandFailure("the accounts are already in \(to.rawValue); choose the other backend") }
            let sourceStore = try options.openStore(), targetStore = try options.openStore(backend: to)
            let source = sourceStore.storage, target = targetStore.storage
            // The source's name is recorded in the lock the copies hold while they move, so that
            // only a later migration from this same store finishes an interrupted one.
            // The HOTP counters the source remembers (its ledger and, for SQLite, its trash) go
            // with the accounts, so a secret added again to the target goes on where it left off.
            let trash = sourceStore.trash as? SealedTrashDirectory
            let trashed: [Mechanism]
            do {
                trashed = try trash?.entries().flatMap(\.mechanisms) ?? []
            } catch {
                throw CommandFailure("Fix or move aside the trash \(trash?.directory.path ?? "") (coffer trash says what is wrong): the HOTP "
                    + "counters it keeps go with the accounts, and it cannot be read (\(error)). Nothing was moved.", status: ExitStatus.of(error))
            }
            let report = try StorageMigration.move(
                from: source, to: target, sourceName: "\(from.rawValue) \(try options.location())",
                sourceLedger: sourceStore.ledger, targetLedger: targetStore.ledger, remembered: trashed)
            // Plain commands follow the accounts from now on.
            try AuthenticatorBackend.record(to, in: options.data.directory)
            let token = report.pushDeviceToken ? " and the push device token" : ""
            print("Moved \(report.accounts) account(s), \(report.mechanisms) mechanism(s), \(report.notifications) notification(s)\(token) "
                + "from \(from.rawValue) to \(to.rawValue).")
            if report.countersLeftBehind > 0 {
                StandardStreams.note("coffer: warning: \(to.rawValue) keeps no record of HOTP counters, so \(report.countersLeftBehind) "
                    + "remembered counter(s) stayed behind; a HOTP secret used before and added there again could issue codes its server has seen")
            }
            if let trash, case let entries = try trash.entries(), !entries.isEmpty {
                StandardStreams.note("coffer: note: the trash (\(entries.count) entries) stays with the sqlite store; "
                    + "coffer trash --backend sqlite lists it")
            }
            print("Commands now use \(to.rawValue) (recorded in \(options.data.directory.appendingPathComponent(AuthenticatorBackend.recordName).path)).")
        }
    }
}
