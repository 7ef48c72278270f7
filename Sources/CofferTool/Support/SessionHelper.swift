import CofferStorage
import Foundation

/// Finds `coffer-session`, which does the session commands (``SessionCommand``), and replaces
/// this process with it.
///
/// It is looked for only beside the running binary, by that binary's real path (`/proc/self/exe`,
/// links resolved): in `../libexec/coffer/`, where `scripts/install` and the Debian package put
/// it, then in the binary's own directory (a build directory). Never through `PATH` or the
/// working directory. The file found first must be an executable regular file that root or you
/// own and nobody else can write to, in a directory that passes the same checks all the way up
/// (``TrustedSearchPath``): it runs as you, with your sessions' tokens. One that does not is
/// refused, not passed over for the next.
enum SessionHelper {
    static let name = "coffer-session"

    /// Where `coffer-session` is looked for, in order, beside `binary` (a real path).
    static func candidates(beside binary: String) -> [String] {
        let directory = URL(fileURLWithPath: binary).deletingLastPathComponent()
        return [
            directory.deletingLastPathComponent().appendingPathComponent("libexec/coffer/\(name)").path,
            directory.appendingPathComponent(name).path,
        ]
    }

    /// Replaces this process with `coffer-session`, with the same arguments and environment.
    /// Returns only by throwing: none is installed, the one found is not safe to run, or it
    /// cannot be started.
    static func handOff() throws -> Never {
        guard let binary = Subprocess.runningBinary else {
            throw CommandFailure("cannot tell where coffer is installed (/proc/self/exe), so cannot find \(name) beside it")
        }
        let candidates = candidates(beside: binary)
        guard let path = candidates.first(where: { access($0, F_OK) == 0 }) else {
            throw CommandFailure("\(name), which does coffer's session commands, is not installed beside \(binary) "
                + "(looked for \(candidates.joined(separator: " and "))); install coffer again (in a clone: swift build --product coffer-session)")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard TrustedSearchPath.isTrustedDirectory(directory), TrustedSearchPath.isTrustedExecutable(path) else {
            throw CommandFailure("Coffer will not run \(path): it or a directory above it is not yours or root's, "
                + "or others can write to it, so it could run someone else's code as you")
        }
        execv(path, CommandLine.unsafeArgv)
        throw CommandFailure("cannot start \(path): \(String(cString: strerror(errno)))")
    }
}
