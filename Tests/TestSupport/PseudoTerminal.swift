import Foundation

/// Runs a shell command at a pseudo-terminal (util-linux `script(1)`) and types at it as a person
/// would: each answer only once its prompt is on the terminal.
///
/// Waiting for a fixed time instead fails on a machine busy with the whole suite, where a process
/// can take seconds to ask. Here the terminal's output is copied to a file that the typist polls;
/// each step waits (up to a minute) until its prompt has appeared as many times as the steps so
/// far have asked for it, then types. Standard input stays open until the command has ended, so
/// the command never sees an end of file it did not ask for.
public enum PseudoTerminal {
    /// One answer: `text` is typed once `prompt` is on the terminal `times` times (by default
    /// once more than the earlier steps waited for the same prompt).
    public struct Step: Sendable {
        public let prompt: String
        public let text: String
        public let times: Int?
        public init(after prompt: String, times: Int? = nil, type text: String) {
            self.prompt = prompt
            self.text = text
            self.times = times
        }
    }

    public static let isAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/script")

    /// Runs `command` with `bash -c` inside a pseudo-terminal. The result's `stdout` is what the
    /// terminal showed (standard output and standard error, echoes included); its status is the
    /// command's.
    public static func run(
        _ command: String, typing steps: [Step] = [], environment: [String: String] = [:],
        removing removed: [String] = [], deadline: Duration = .seconds(180)
    ) async throws -> CofferProcess.Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-pty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        func file(_ name: String) -> String { scratch.appendingPathComponent(name).path }
        try Data(command.utf8).write(to: URL(fileURLWithPath: file("command")))
        var typist = ""
        var seen: [String: Int] = [:]
        for (index, step) in steps.enumerated() {
            seen[step.prompt] = step.times ?? (seen[step.prompt, default: 0] + 1)
            try Data(step.prompt.utf8).write(to: URL(fileURLWithPath: file("prompt-\(index)")))
            try Data(step.text.utf8).write(to: URL(fileURLWithPath: file("text-\(index)")))
            typist += """
                for i in $(seq 600); do
                  [ "$(grep -o -F -f "$D/prompt-\(index)" "$D/terminal" | wc -l)" -ge \(seen[step.prompt]!) ] && break
                  kill -0 "$pid" 2>/dev/null || break; sleep 0.1
                done
                cat "$D/text-\(index)"

                """
        }
        let driver = """
            D="$1"
            mkfifo "$D/keys"
            script -qec "bash $D/command" /dev/null < "$D/keys" > "$D/terminal" 2>&1 & pid=$!
            {
            \(typist)while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
            } > "$D/keys"
            wait "$pid"; status=$?
            cat "$D/terminal"
            exit $status
            """
        return try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", driver, "pseudo-terminal", scratch.path],
            environment: environment, removing: removed, deadline: deadline)
    }
}
