import Foundation
import CofferStorage

extension DoctorCommand {
    /// `LD_LIBRARY_PATH` entries the tool dropped at start (relative, empty, or writable by
    /// others): it loads nothing from them itself, but the loader took the libraries every
    /// program links from them before any program could check.
    func checkLibrarySearchPath(_ report: (Outcome, String, String) -> Void) {
        if let dropped = ProcessEnvironment.value(ProcessHardening.droppedVariable) {
            report(.fail, "library search path", "LD_LIBRARY_PATH has entries that are relative, empty or writable by others "
                + "('\(dropped)'). Coffer loads nothing from them, but every program you start, this one included, had the "
                + "libraries it links looked up there first: remove them from LD_LIBRARY_PATH in your shell's start-up files")
        } else if let search = ProcessEnvironment.value("LD_LIBRARY_PATH"), !search.isEmpty {
            report(.ok, "library search path", "every LD_LIBRARY_PATH entry is a directory only root or you can write to")
        }
    }
}
