import Foundation

/// P13: `coffer token NAME` as a new process printing a valid access token, against Debian's
/// `oidc-token NAME` asking a running oidc-agent for one, both signed in at the same provider
/// (the one scripts/with-oidc-provider runs; Benchmarks/Floors/oidc-sessions.sh signs both in).
///
/// Coffer reads the session from its sealed file (key in a 0600 key file, no session bus) and
/// checks the token's expiry; oidc-token asks the agent, which keeps the token in its memory.
/// The ratio is reported, with no target: the agent pays its start-up once, coffer each time.
struct TokenToolBenchmark {
    var coffer: String
    var directory: URL
    var runs: Int

    func run(into report: Report) throws {
        guard let oidcToken = Subprocess.find("oidc-token") else { throw BenchFailure("P13 needs oidc-token (oidc-agent-cli) on PATH") }
        let floors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Floors/oidc-sessions.sh")
        let sessions = directory.appendingPathComponent("p13")
        try? FileManager.default.removeItem(at: sessions)
        try FileManager.default.createDirectory(at: sessions, withIntermediateDirectories: true)
        let printed = try Subprocess.run([floors.path, sessions.path, coffer])
        var agent: [String: String] = [:]
        for line in printed.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { agent[parts[0]] = parts[1] }
        }
        guard let socket = agent["OIDC_SOCK"], let pid = agent["OIDCD_PID"] else {
            throw BenchFailure("oidc-sessions.sh printed no agent: \(printed)")
        }
        defer { Self.stop(agent: Int32(pid) ?? 0) }

        var ours = ProcessInfo.processInfo.environment
        ours["DBUS_SESSION_BUS_ADDRESS"] = nil
        ours["COFFER_HOME"] = sessions.appendingPathComponent("coffer-home").path
        ours["COFFER_LOG_LEVEL"] = "error"
        var theirs = ProcessInfo.processInfo.environment
        theirs["OIDC_SOCK"] = socket
        let cofferCommand = [coffer, "token", "bench"]
        let agentCommand = [oidcToken, "bench"]
        // Both print a token before they are timed.
        for (command, environment) in [(cofferCommand, ours), (agentCommand, theirs)] {
            let token = try Subprocess.run(command, environment: environment).trimmingCharacters(in: .whitespacesAndNewlines)
            guard token.count >= 16, !token.contains(" ") else { throw BenchFailure("\(command[0]) printed no token") }
        }
        var cofferTimes = Timings(), agentTimes = Timings()
        for _ in 0..<runs {
            cofferTimes.append(try Subprocess.wallTime(cofferCommand, environment: ours))
            agentTimes.append(try Subprocess.wallTime(agentCommand, environment: theirs))
        }
        report.add(Row(id: "P13", measurement: "coffer token, a valid token (new process)", coffer: cofferTimes,
                       referenceName: "oidc-token (oidc-agent)", reference: agentTimes, target: .none))
    }

    /// Stops the agent and the process it forked (`oidc-agent --kill` leaves that one).
    static func stop(agent pid: Int32) {
        guard pid > 1 else { return }
        let children = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry -> Int32? in
            guard let child = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
        }
        for process in [pid] + children { kill(process, SIGTERM) }
    }
}
