import Foundation
import Synchronization

/// Runs the built `coffer` binary as a child process, as a person would.
struct CofferProcess {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The `coffer` executable built beside the test bundle.
    static var executable: URL {
        get throws { try builtExecutable("coffer") }
    }

    /// An executable product of this package, built beside the test bundle.
    static func builtExecutable(_ name: String) throws -> URL {
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

    let dataDirectory: URL

    /// Runs `coffer` with `arguments`, `COFFER_HOME` set to the data directory, optional input.
    @discardableResult
    func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> Result {
        try Self.run(executable: Self.executable, arguments, input: input,
                     environment: ["COFFER_HOME": dataDirectory.path].merging(environment) { $1 })
    }

    /// Runs any executable and collects its output.
    static func run(executable: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        // Read both pipes before waiting, so a chatty child never blocks on a full pipe.
        let errData = Mutex<Data?>(nil)
        let reader = Thread { errData.withLock { $0 = stderr.fileHandleForReading.readDataToEndOfFile() } }
        reader.start()
        let outData = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while errData.withLock({ $0 == nil }) { usleep(1000) }
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData.withLock { $0 } ?? Data(), as: UTF8.self))
    }
}

