import CofferAuthenticator
import CofferStorage
import Foundation

extension DoctorCommand {
    /// A key move a killed process left (finished now, when it can be), and copies of the key
    /// where the record does not say it is: a key file in the clear beside a sealed key opens
    /// the store for whoever copies the directory.
    func checkKeyCopies(in directory: URL, _ report: (Outcome, String, String) -> Void) async {
        let move = DefaultAuthenticatorStorage.keyMove(in: directory, tpmPIN: TPMPIN.ask, passphrase: KeyPassphrase.ask)
        do {
            if let pending = try move.interrupted() {
                do {
                    if let recovery = try await move.finishInterrupted(waitingAtMost: .seconds(1)) {
                        report(.note, "key move", "one was interrupted; \(KeyCommand.describe(recovery))")
                    }
                } catch KeyMove.Failure.busy {
                    report(.fail, "key move", "one from \(pending.from.rawValue) to \(pending.to.rawValue) is under way, or was interrupted "
                        + "while another command uses the accounts (a coffer code --watch?): stop it, and the next command finishes the move")
                    return
                } catch {
                    report(.fail, "key move", "the move from \(pending.from.rawValue) to \(pending.to.rawValue) was interrupted and cannot be "
                        + "finished now (\((error as? LocalizedError)?.errorDescription ?? "\(error)")): a copy of the key stays where the "
                        + "record does not say it is; run coffer again where both places can be reached")
                    return
                }
            }
            guard let recorded = try DefaultAuthenticatorStorage.recordedKeyLocation(in: directory) else { return }
            let strays = try await move.strayCopies()
            guard !strays.isEmpty else {
                report(.ok, "key copies", "the key is only where the record says")
                return
            }
            for place in strays {
                report(.fail, "key copies", "a copy of the key is also in \(try KeyCommand.describe(place, in: directory)), where the record "
                    + "does not say it is (left by an interrupted move); coffer key move --to \(KeyCommand.Move.Place(recorded).rawValue) removes it")
            }
        } catch {
            report(.fail, "key move", (error as? LocalizedError)?.errorDescription ?? "\(error)")
        }
    }
}

extension KeyCommand.Move.Place {
    /// The place `location` is, as `--to` names it.
    init(_ location: KeyStoreSelection.Location) {
        switch location {
        case .file: self = .file
        case .secretService: self = .keyring
        case .tpm: self = .tpm
        case .passphrase: self = .passphrase
        }
    }
}
