import CofferStorage
import CofferMFAEngine
import CofferAuthenticator
import CofferPostgres
import Foundation
import Logging

extension DoctorCommand {
    /// The postgres backend's checks, when it is configured (`COFFER_DATABASE_URL` set): the
    /// URL, the key-encryption key, the connection, the schema version, the key ring, and every
    /// record of the owner read and opened.
    func checkPostgres(_ report: (Outcome, String, String) -> Void) {
        guard let text = ProcessEnvironment.value("COFFER_DATABASE_URL"), !text.isEmpty else {
            report(.note, "postgres", "not configured (set COFFER_DATABASE_URL to use --backend postgres)")
            return
        }
        let url: PostgresConnectionURL, kek: KeyEncryptionKey
        do {
            url = try PostgresConnectionURL(text)
            report(.ok, "postgres URL", "\(url)")
        } catch {
            return report(.fail, "postgres URL", error.localizedDescription)
        }
        if url.socketPath != nil {
            do {
                try url.checkSocket()
                report(.ok, "postgres socket", "belongs to \(url.requiredPeer ?? "root, postgres or you"), or is not there yet")
            } catch {
                return report(.fail, "postgres socket", error.localizedDescription)
            }
        }
        do {
            kek = try PostgresBackend.kek(in: data.directory)
            report(.ok, "postgres key-encryption key", "\(PostgresBackend.kekLocation(in: data.directory)), fingerprint \(kek.fingerprint)")
        } catch {
            return report(.fail, "postgres key-encryption key", error.localizedDescription)
        }
        do {
            var options = CofferDatabase.Configuration.Options()
            options.listensForChanges = false
            options.operationTimeout = .seconds(5)
            let database = try CofferDatabase(configuration: .init(url: url, keyEncryptionKey: kek, options: options))
            try CommandServices.start(database)
            let version = try SyncBridge.run { try await database.schemaVersion() }
            report(.ok, "postgres connection", "the server answers")
            switch version.database {
            case version.known: report(.ok, "postgres schema", "version \(version.database), this Coffer's")
            case 0: report(.note, "postgres schema", "not created yet: the first command creates it")
            case ..<version.known: report(.note, "postgres schema", "version \(version.database); the next command migrates it to \(version.known)")
            default: report(.fail, "postgres schema", "version \(version.database), newer than this Coffer knows (\(version.known)): upgrade Coffer")
            }
            guard version.database == version.known else { return }
            let client = try PostgresBackend.ownClient(database, logger: Logger(label: "coffer"))
            let key = try SyncBridge.run { try await client.keys.primaryKey(for: client.keyAlias) }
            report(key == nil ? .note : .ok, "postgres key ring",
                   key.map { "owner \(client.owner)'s own: key \($0.id) of \(client.keyAlias) opens with this key-encryption key" }
                       ?? "owner \(client.owner) has no key ring of its own yet: the next command makes one (and moves any secrets "
                       + "sealed under the shared ring to it)")
            let accounts = try SyncBridge.run {
                let accounts = try await client.allAccounts()
                for account in accounts { _ = try await client.mechanisms(of: account) }
                _ = try await client.allNotifications()
                return accounts.count
            }
            let unreadable = client.unreadableRecords
            report(unreadable.isEmpty ? .ok : .fail, "postgres accounts", "\(accounts) account(s) of owner \(client.owner)" + (unreadable.isEmpty ? ""
                : ", \(client.unreadableRecordCount) stored record(s) cannot be read, left as they are: \(unreadable.prefix(3).joined(separator: "; "))"))
        } catch {
            report(.fail, "postgres", error.localizedDescription)
        }
    }
}
