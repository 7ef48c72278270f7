import Foundation

/// Runs the built `coffer` binary as a child process, as a person would.
public struct CofferProcess: Sendable {
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
        /// Whether the process was killed for running past its deadline.
        public let timedOut: Bool
        /// How long it ran.
        public let elapsed: Duration
    }

    /// The `coffer` executable built beside the test bundle.
    public static var executable: URL {
        get throws { try builtExecutable("coffer") }
    }

    /// An executable product of this package, built beside the test bundle.
    public static func builtExecutable(_ name: String) throws -> URL {
            var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            // The test bundle is `.build/<config>/CofferPackageTests.xctest`; on some platforms the
            // binary sits deeper inside it.
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                directory.deleteLastPathComponent()
            }
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey:
                "the \(name) executable was not built next to the tests; run `swift build` first"])
    }

    public let dataDirectory: URL

    public init(dataDirectory: URL) {
        self.dataDirectory = dataDirectory
    }

    /// Runs `coffer` with `arguments`, `COFFER_HOME` set to the data directory, optional input.
    @discardableResult
    public func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) async throws -> Result {
        try await Self.run(executable: Self.executable, arguments, input: input,
                           environment: ["COFFER_HOME": dataDirectory.path].merging(environment) { $1 })
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }

    /// Runs any executable and collects its output.
    ///
    /// The child is started with `posix_spawn` in a session of its own, with its output going to
    /// temporary files rather than pipes, and is waited for by polling `waitpid` from this task:
    /// daemons it leaves behind can neither keep us waiting for end-of-file nor escape the
    /// watchdog, which kills the child's whole process group after `deadline` (the result then
    /// says `timedOut`), and no thread is blocked while it runs.
    public static func run(
        executable: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = [:],
        removing removed: [String] = [], deadline: Duration = .seconds(120)
    ) async throws -> Result {
        _ = SuiteTraceLog.installed
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-process-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let paths = ["in", "out", "err"].map { scratch.appendingPathComponent($0).path }
        try Data((input ?? "").utf8).write(to: URL(fileURLWithPath: paths[0]))
        let descriptors = [open(paths[0], O_RDONLY), open(paths[1], O_WRONLY | O_CREAT, 0o600), open(paths[2], O_WRONLY | O_CREAT, 0o600)]
        defer { descriptors.forEach { close($0) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, descriptor) in descriptors.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, descriptor, Int32(target))
        }
        // Nothing else of ours: a child (or a daemon it leaves) holding a copy of a connection
        // this process made — to a software TPM that serves one connection at a time, say —
        // would keep the other end from seeing it closed, and hold up this process's next one.
        // (glibc 2.34+; Swift's Glibc module does not declare it, so it is looked up.)
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A new session, and signals as a fresh process has them: the spawning thread may be a
        // dispatch worker with most signals blocked, and children would inherit that mask.
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(0x80 | 0x08 | 0x04))  // SETSID | SETSIGMASK | SETSIGDEF

        var variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        for name in removed { variables[name] = nil }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }

        let clock = ContinuousClock()
        let start = clock.now
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }

        var status: Int32 = 0
        var killed = false
        while waitpid(pid, &status, WNOHANG) == 0 {
            if !killed, clock.now - start > deadline {
                killed = true
                kill(-pid, SIGKILL)
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        let exitCode = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let stderr = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: paths[2]))) ?? Data(), as: UTF8.self)
        // What a child logs and reports goes to the suite's trace log too (R7).
        if !stderr.isEmpty { SuiteTraceLog.write("child \(executable.lastPathComponent) stderr: \(stderr)") }
        return Result(
            status: exitCode,
            stdout: String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: paths[1]))) ?? Data(), as: UTF8.self),
            stderr: stderr,
            timedOut: killed,
            elapsed: clock.now - start)
    }
}

extension Duration {
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
