import CofferAuthenticator
import CofferStorage
import Foundation

/// The tool's trash: the library's `SealedTrashDirectory` in `<data-dir>/trash`, beside the
/// SQLite store (the other backends keep none), kept ``keepDays`` days.
enum ToolTrash {
    /// How long an entry is kept: `COFFER_TRASH_DAYS` (0 to 365; 0 keeps nothing past the
    /// command that put it there), else 30 days.
    static var keepDays: Int {
        get throws {
            guard let text = ProcessEnvironment.value("COFFER_TRASH_DAYS") else { return 30 }
            guard let days = Int(text), (0...365).contains(days) else {
                throw CommandFailure.usage("COFFER_TRASH_DAYS is '\(text.prefix(20))'; it must be a number of days from 0 to 365")
            }
            return days
        }
    }
}

extension SealedTrashDirectory {
    /// The failure to report when entries do not open because the key cannot be used: what to
    /// do, how many wait, and the cause's exit status. `nil` when the key is usable.
    func keyFailure(waiting count: Int) -> CommandFailure? {
        guard count > 0, let problem = keyProblem else { return nil }
        return CommandFailure("\(UnreadableRecords.keyAdvice(problem)) Until then \(count) trash "
            + "\(count == 1 ? "entry stays" : "entries stay") sealed, as they are.", status: ExitStatus.of(problem))
    }
}
