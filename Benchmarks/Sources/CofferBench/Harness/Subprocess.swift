import Foundation

/// Runs helper programs (the C floor, Python keyring, `coffer`, `oathtool`).
enum Subprocess {
    struct Failure: Error, CustomStringConvertible {
        var command: [String]
        var status: Int32
        var output: String
        var description: String { "\(command.joined(separator: " ")) exited with \(status): \(output)" }
    }

    /// Runs `command` to completion and returns what it printed on standard output.
    @discardableResult
    static func run(_ command: [String], environment: [String: String]? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        if let environment { process.environment = environment }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complained = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(command: command, status: process.terminationStatus,
                          output: String(decoding: printed + complained, as: UTF8.self))
        }
        return String(decoding: printed, as: UTF8.self)
    }

    /// Runs a helper that prints one per-operation time in nanoseconds per line.
    static func timings(_ command: [String]) throws -> Timings {
        Timings(try run(command).split(separator: "\n").compactMap { Double($0) })
    }

    /// How long `command` takes from spawn to exit, in nanoseconds, output discarded.
    static func wallTime(_ command: [String], environment: [String: String]) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let start = Clock.now()
        try process.run()
        process.waitUntilExit()
        let elapsed = Double(Clock.now() - start)
        guard process.terminationStatus == 0 else {
            throw Failure(command: command, status: process.terminationStatus, output: "")
        }
        return elapsed
    }

    /// Runs a program that daemonizes (it forks and its first process exits), waiting only for
    /// that first process. Foundation's `Process` would wait for the daemon too: it inherits the
    /// descriptor `Process` watches for the end of its child.
    static func startDaemon(_ command: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in 0...2 { posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_RDWR, 0) }
        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure(command: command, status: spawned, output: "posix_spawn failed") }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        guard status == 0 else { throw Failure(command: command, status: status, output: "") }
    }

    /// The full path of `name` on `PATH`, if it is there.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
