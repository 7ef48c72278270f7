import CofferStorage
import Foundation

/// Finds `coffer-session`, which does the session commands (``SessionCommand``), and replaces
/// this process with it.
///
/// It is looked for only beside the running binary, by that binary's real path (`/proc/self/exe`,
/// links resolved): in `../libexec/coffer/`, where `scripts/install` and the Debian package put
/// it, then in the binary's own directory (a build directory). Never through `PATH` or the
/// working directory. The first candidate there is must be an executable regular file itself
/// (not a link), that root or you own and nobody else can write to, in a directory that passes
/// the same checks all the way up (``TrustedSearchPath``): it runs as you, with your sessions'
/// tokens. One that does not, or that cannot be read, is refused, not passed over for the next.
/// The file is opened once, checked on that descriptor, and that same file is executed
/// (`fexecve`), so nothing can be swapped in between.
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
    static func handOff() throws(CommandFailure) -> Never {
        guard let binary = Subprocess.runningBinary else {
            throw CommandFailure("cannot tell where coffer is installed (/proc/self/exe), so cannot find \(name) beside it")
        }
        let candidates = candidates(beside: binary)
        for path in candidates {
            // O_NOFOLLOW: a link is refused (ELOOP), never followed to somewhere unchecked.
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            if descriptor < 0 {
                if errno == ENOENT { continue }
                let reason = errno == ELOOP ? "it is a symbolic link (install the file itself there)" : String(cString: strerror(errno))
                throw refusal(path, reason)
            }
            defer { close(descriptor) }
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            guard TrustedSearchPath.isTrustedDirectory(directory) else {
                throw refusal(path, "its directory or one above it is not yours or root's, or others can write to it")
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0, TrustedSearchPath.isOwnedClosedFile(info), UInt32(info.st_mode) & 0o111 != 0 else {
                throw refusal(path, "it is not an executable file of yours or root's that only its owner can write")
            }
            fexecve(descriptor, CommandLine.unsafeArgv, environ)
            throw CommandFailure("cannot start \(path): \(String(cString: strerror(errno)))")
        }
        throw CommandFailure("\(name), which does coffer's session commands, is not installed beside \(binary) "
            + "(looked for \(candidates.joined(separator: " and "))); install coffer again (in a clone: swift build --product coffer-session)")
    }

    private static func refusal(_ path: String, _ reason: String) -> CommandFailure {
        CommandFailure("Coffer will not run \(path): \(reason), so it could run someone else's code as you")
    }
}
