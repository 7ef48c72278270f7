import Foundation

/// Rows for the table scripts/reliability prints: when `COFFER_RELIABILITY_REPORT` names a file,
/// each reliability test appends what it tried, how many times, and what came of it.
public enum ReliabilityReport {
    /// Appends one row: `id` (R1…R7), the attack, how many times it was tried, the outcome.
    public static func record(_ id: String, _ attack: String, tried: String, outcome: String) {
        guard let path = ProcessInfo.processInfo.environment["COFFER_RELIABILITY_REPORT"], !path.isEmpty else { return }
        let line = [id, attack, tried, outcome].map { $0.replacingOccurrences(of: "|", with: "/") }.joined(separator: "|") + "\n"
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = Array(line.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
