import CofferOidc
import CofferStorage
import Foundation

extension DoctorCommand {
    /// The OpenID Connect sessions (`coffer login`): each one that can no longer give a token
    /// without signing in again fails, with the command that signs in. Nothing is made when
    /// there are none.
    func checkSessions(_ report: (Outcome, String, String) -> Void) async {
        let directory = data.directory.appendingPathComponent("sessions", isDirectory: true)
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        do {
            let sessions = try OidcSessions(directory: directory)
            let names = try sessions.names()
            var failing = 0
            for name in names {
                if let problem = await sessions.refreshProblem(name) {
                    failing += 1
                    report(.fail, "session \(name)", "\(TerminalText.escaped(problem)); sign in again: coffer login \(name)")
                }
            }
            if failing == 0 { report(.ok, "sessions", names.isEmpty ? "none" : "\(names.count) can give tokens (\(names.joined(separator: ", ")))") }
        } catch {
            report(.fail, "sessions", "\(directory.path) cannot be used: \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
        }
    }
}
