import Foundation

/// A throwaway software TPM 2.0 (`swtpm socket --tpm2`) with its own state directory and a Unix
/// socket, for the TPM tests: each test that needs a TPM of its own (another TPM, one that stops,
/// one in lockout) starts one. Stopped and removed by ``remove()``.
public final class SoftwareTPM: Sendable {
    /// The state directory, the socket and its control socket are in here.
    public let directory: String
    /// The TCTI that reaches it (`swtpm:path=…`), for `COFFER_TPM_TCTI` and `TPM2TOOLS_TCTI`.
    public let tcti: String

    /// Whether swtpm is installed. `scripts/test` sets `COFFER_TEST_TPM=1`, which makes a missing
    /// swtpm a failure instead of a skip.
    public static var isAvailable: Bool {
        if ProcessInfo.processInfo.environment["COFFER_TEST_TPM"] == "1" { return true }
        return FileManager.default.isExecutableFile(atPath: "/usr/bin/swtpm")
    }

    /// Starts a fresh TPM.
    public static func start() async throws -> SoftwareTPM {
        let tpm = try SoftwareTPM()
        try await tpm.start()
        return tpm
    }

    private init() throws {
        // A short path: a Unix socket's path must fit in 108 bytes.
        var template = Array("/tmp/coffer-tpm.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        directory = String(cString: made)
        tcti = "swtpm:path=\(directory)/sock"
    }

    /// Starts swtpm on the state directory (again, after ``kill()``: the same TPM, its seeds kept).
    public func start() async throws {
        unlink("\(directory)/sock")
        unlink("\(directory)/sock.ctrl")
        // Its output goes to a log file: the daemon would hold a pipe open forever.
        let result = try await Self.run("/usr/bin/swtpm", [
            "socket", "--log", "file=\(directory)/swtpm.log", "--tpm2", "--tpmstate", "dir=\(directory)",
            "--server", "type=unixio,path=\(directory)/sock", "--ctrl", "type=unixio,path=\(directory)/sock.ctrl",
            "--flags", "not-need-init,startup-clear", "--daemon", "--pid", "file=\(directory)/swtpm.pid",
        ])
        guard result.status == 0 else { throw SoftwareTPMError.failed("swtpm did not start: \(result.output)") }
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: "\(directory)/sock") {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The running swtpm's process id.
    public var pid: pid_t? {
        guard let text = try? String(contentsOfFile: "\(directory)/swtpm.pid", encoding: .utf8) else { return nil }
        return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Stops swtpm (SIGKILL: the TPM is gone at once, its sockets closed; its state directory
    /// stays). Not waited for: the daemon is no child of ours, and where nothing reaps orphans it
    /// stays a zombie.
    public func kill() {
        guard let pid else { return }
        _ = Foundation.kill(pid, SIGKILL)
        unlink("\(directory)/swtpm.pid")
    }

    /// Freezes swtpm (SIGSTOP): it accepts connections but never answers.
    public func freeze() { if let pid { _ = Foundation.kill(pid, SIGSTOP) } }

    /// Lets a frozen swtpm run again.
    public func thaw() { if let pid { _ = Foundation.kill(pid, SIGCONT) } }

    /// Runs a tpm2-tools command against this TPM and returns its output.
    @discardableResult
    public func tpm2(_ tool: String, _ arguments: [String]) async throws -> String {
        let result = try await Self.run("/usr/bin/\(tool)", arguments, environment: ["TPM2TOOLS_TCTI": tcti])
        guard result.status == 0 else { throw SoftwareTPMError.failed("\(tool) failed: \(result.output)") }
        return result.output
    }

    /// Stops swtpm and removes its state.
    public func remove() {
        thaw()
        kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func run(
        _ path: String, _ arguments: [String], environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String) {
        let result = try await CofferProcess.run(executable: URL(fileURLWithPath: path), arguments,
                                                 environment: environment, deadline: .seconds(30))
        return (result.status, result.stdout + result.stderr)
    }
}

/// A software TPM could not be started or driven.
public enum SoftwareTPMError: Error, CustomStringConvertible {
    case failed(String)
    public var description: String {
        switch self { case .failed(let message): return message }
    }
}
