import CProcessHardening
import CofferStorage
import Foundation

/// What the tool does to its own process before anything else, since it holds secrets in
/// memory and loads libraries and helper programs at run time:
///
/// - **Library search path.** `LD_LIBRARY_PATH` entries (split at `:` and `;`, as the loader
///   splits them) that are empty or relative (they mean the working directory) or that name a
///   directory another user can write to are dropped, and the tool starts itself again with the
///   cleaned variable (the loader reads it only at start). So libsecret, zbar and the others are
///   never loaded from a folder someone else could fill.
/// - **One value per name.** A name the environment gives twice (a program can pass any list)
///   keeps its last value, the one the loader took, before anything reads it: the tool, the C
///   libraries it loads and the programs it starts all see the same `LD_LIBRARY_PATH`,
///   `COFFER_HOME` or `DISPLAY` (``ProcessEnvironment/collapseRepeatedNames()``). The library
///   search path is judged on every value it was given.
/// - **No core file, no peeking.** `PR_SET_DUMPABLE` 0 and `RLIMIT_CORE` 0 (as ssh-agent and
///   gpg-agent do): a crash writes no core file, and other processes of the same user can neither
///   attach a debugger nor read `/proc/PID/mem` or `environ`.
/// - **A crash exits.** One line on standard error and exit status 128 + the signal, at once (the
///   Swift runtime's backtracer would wait at an interactive prompt under `--watch`, and could
///   print memory).
///
/// Helper programs are found by ``Subprocess/find(_:)`` in trusted `PATH` entries only.
enum ProcessHardening {
    /// What the tool dropped from `LD_LIBRARY_PATH` before starting itself again.
    static let droppedVariable = "COFFER_DROPPED_LIBRARY_PATH"

    static func start() {
        let searches = ProcessEnvironment.values("LD_LIBRARY_PATH")
        ProcessEnvironment.collapseRepeatedNames()
        if let search = searches.last {
            // Each entry of every value judged once; the loader's value keeps the others.
            let untrusted = searches.flatMap(TrustedSearchPath.libraryEntries).filter { !TrustedSearchPath.isTrustedDirectory($0) }
            let kept = TrustedSearchPath.libraryEntries(of: search).filter { !untrusted.contains($0) }.joined(separator: ":")
            if kept != search || !untrusted.isEmpty {
                if kept.isEmpty { unsetenv("LD_LIBRARY_PATH") } else { setenv("LD_LIBRARY_PATH", kept, 1) }
                // The loader read the old value at start: begin again with the cleaned one, by the
                // binary's own path (so `ps` still says coffer). Should that fail, go on: nothing
                // has been loaded from the search path yet.
                // `coffer doctor` reports what was dropped: the loader took the libraries the tool
                // links from it before the tool started.
                if !untrusted.isEmpty { setenv(droppedVariable, untrusted.joined(separator: ":"), 1) }
                if let binary = Subprocess.runningBinary { execv(binary, CommandLine.unsafeArgv) }
            }
        }
        if coffer_harden_process() != 0 {
            StandardStreams.note("coffer: warning: could not turn core files off (\(String(cString: strerror(errno))))")
        }
    }
}
