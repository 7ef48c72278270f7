import Foundation
import CofferStorage

/// Runs the helper programs the tool uses (clipboard tools), and starts itself detached.
enum Subprocess {
    /// The executable `name` in a trusted entry of `PATH` (``TrustedSearchPath``: never the
    /// working directory, a relative entry or a directory others can write to), owned by root
    /// or you and writable by no one else; or `nil`.
    static func find(_ name: String) -> String? {
        let path = ProcessEnvironment.value("PATH") ?? "/usr/bin:/bin"
        return TrustedSearchPath.entries(of: path).map { "\($0)/\(name)" }.first(where: TrustedSearchPath.isTrustedExecutable)
    }

    /// Where a program's standard output and error go.
    private enum Output {
        /// Both to /dev/null.
        case discarded
        /// Output read back (at most 1 MiB), error to /dev/null.
        case captured
        /// Both where ours go (the terminal).
        case inherited
    }

    /// Runs `name` with `input` on its standard input (its output discarded: a tool that stays
    /// behind to serve the clipboard must not keep a pipe of ours open) and returns its status.
    static func run(_ name: String, _ arguments: [String], input: Data) throws -> Int32 {
        try spawn(name, arguments, input: input, output: .discarded).status
    }

    /// Runs `name` with `input` on its standard input and our standard output and error (a pager
    /// on our terminal), and returns its status.
    static func runAttached(_ name: String, _ arguments: [String], input: Data) throws -> Int32 {
        try spawn(name, arguments, input: input, output: .inherited).status
    }

    /// What `name` prints.
    static func output(_ name: String, _ arguments: [String]) throws -> Data {
        try spawn(name, arguments, input: Data(), output: .captured).output
    }

    /// posix_spawn and waitpid: Foundation's `Process` waits on a run loop that an async command
    /// does not run, and never noticed `xclip` exit.
    private static func spawn(_ name: String, _ arguments: [String], input: Data, output destination: Output) throws -> (status: Int32, output: Data) {
        guard let path = find(name) else { throw CommandFailure("\(name) is not installed") }
        var inputPipe: [Int32] = [0, 0], outputPipe: [Int32] = [0, 0]
        guard pipe(&inputPipe) == 0, pipe(&outputPipe) == 0 else { throw CommandFailure("cannot start \(name): \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        switch destination {
        case .discarded:
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .captured:
            posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .inherited:
            break
        }
        for descriptor in inputPipe + outputPipe { posix_spawn_file_actions_addclose(&actions, descriptor) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let started = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(inputPipe[0])
        close(outputPipe[1])
        guard started == 0 else {
            close(inputPipe[1])
            close(outputPipe[0])
            throw CommandFailure("cannot start \(name): \(String(cString: strerror(started)))")
        }
        _ = input.withUnsafeBytes { write(inputPipe[1], $0.baseAddress, $0.count) }
        close(inputPipe[1])
        var output = Data()
        if destination == .captured {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(outputPipe[0], &buffer, buffer.count)
                if count > 0 { output.append(contentsOf: buffer[0..<count]) } else if count == 0 || errno != EINTR { break }
                if output.count > 1 << 20 { break }
            }
        }
        close(outputPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        return (status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F), output)
    }

    /// The running binary's own file (`/proc/self/exe`), or `nil`.
    static var runningBinary: String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// Starts `executable` (an absolute path) detached, in a session of its own, with no terminal
    /// and its standard streams on /dev/null, and does not wait for it.
    static func detach(_ executable: String, _ arguments: [String], environment extra: [String: String]) throws {
        guard executable.hasPrefix("/") else { throw CommandFailure("will not start \(executable): not an absolute path") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor in 0...2 { posix_spawn_file_actions_addopen(&actions, Int32(descriptor), "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(0x80))  // POSIX_SPAWN_SETSID
        let path = executable
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let variables = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard status == 0 else { throw CommandFailure("could not start \(path): \(String(cString: strerror(status)))") }
    }
}
