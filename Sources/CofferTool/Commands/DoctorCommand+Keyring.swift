import CofferMFAEngine
import CofferAuthenticator
import CofferStorage
import Foundation

extension DoctorCommand {
    /// The accounts kept in the keyring (`--backend keychain`): how many, and any record that
    /// cannot be read or that no account owns (a removal that raced a write, an item deleted
    /// with another tool). With `--repair`, the lost accounts are added back; nothing is
    /// removed.
    func checkKeyringAccounts(_ report: (Outcome, String, String) -> Void) {
        guard SecretService.libraryProblem == nil, SecretService(timeout: .seconds(3)).usabilityProblem() == nil else { return }
        // Where every shell of yours on this session bus, whatever its environment, takes the
        // keyring's lock.
        do {
            let lock = try SyncBridge.run { try await KeyringLock.named("org.coffer.authenticator", timeout: .seconds(3)) }
            report(.ok, "keyring lock", lock.path)
        } catch {
            report(.fail, "keyring lock", error.localizedDescription)
        }
        let daemons = Self.keyringDaemons()
        if daemons > 1 {
            report(.note, "keyring daemons", "\(daemons) gnome-keyring-daemon processes run as you. Two that serve the same keyring "
                + "files (two logins, each with a session bus of its own) do not see each other's writes, so a HOTP counter can go "
                + "back; no lock can make them agree. Keep one session's keyring for HOTP accounts")
        }
        let client: KeychainStorageClient
        do {
            // Every item's attributes read, not the listings' item index: an item changed in place
            // by another program shows here (and the index is corrected).
            client = try KeychainStorageClient.make().withoutItemIndex()
        } catch {
            return report(.note, "keyring accounts", error.localizedDescription)
        }
        if repair {
            do {
                let restored = try client.restoreMissingAccounts()
                if !restored.isEmpty {
                    report(.note, "keyring accounts", "added back \(restored.count) account(s) whose mechanisms had lost them: "
                        + restored.map { "\($0.issuer): \($0.accountName)" }.joined(separator: ", ")
                        + "; `coffer list --backend keychain` shows them, `coffer remove` removes them")
                }
            } catch {
                report(.fail, "keyring accounts", "could not add back the lost accounts: \(error.localizedDescription)")
            }
        }
        // An empty keyring (most machines using SQLite) is not worth a line.
        guard client.isEmpty() == false || client.unreadableRecordCount > 0 else { return }
        let repairing = repair
        reportRecords(of: client, "keyring accounts", hint: { unreadable in
            unreadable.contains { $0.contains("no account owns it") } && !repairing ? " (run `coffer doctor --repair` to add their accounts back)" : ""
        }, report) { "\($0) account(s) in the OS keyring" }
    }

    /// How many gnome-keyring-daemon processes run as this user (from `/proc`).
    static func keyringDaemons() -> Int {
        let me = geteuid()
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return processes.filter { $0.allSatisfy(\.isNumber) }.filter { pid in
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
            let lines = status.split(separator: "\n")
            let name = lines.first { $0.hasPrefix("Name:") }?.split(separator: "\t").last
            let uid = lines.first { $0.hasPrefix("Uid:") }?.split(separator: "\t").dropFirst().first
            return name == "gnome-keyring-d" && uid == Substring(String(me))
        }.count
    }
}
