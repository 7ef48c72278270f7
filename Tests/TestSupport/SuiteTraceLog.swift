import Foundation
import Logging

/// R7: when `COFFER_TEST_TRACE_LOG` names a file (scripts/test sets it), every log line the
/// test process produces, at every level down to trace, is appended to that file, so that
/// scripts/check-trace-log can look for the tests' secrets in it after the run.
///
/// The global logging system is switched the first time a test makes a `TemporaryDirectory`,
/// runs a process or captures logs (the earliest moments tests share), and lines captured by
/// ``LogCapture`` are copied here too.
public enum SuiteTraceLog {
    private static let descriptor: Int32? = {
        guard let path = ProcessInfo.processInfo.environment["COFFER_TEST_TRACE_LOG"], !path.isEmpty else { return nil }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        return fd >= 0 ? fd : nil
    }()

    /// Installs the trace-level handler once, when the variable is set.
    public static let installed: Bool = {
        guard descriptor != nil else { return false }
        LoggingSystem.bootstrap { label in
            TraceLineHandler { event, metadata in SuiteTraceLog.write(format(label: label, event: event, metadata: metadata)) }
        }
        return true
    }()

    /// Appends one line (a single write, so lines from threads do not interleave).
    static func write(_ line: String) {
        guard let descriptor else { return }
        let bytes = Array((line.replacingOccurrences(of: "\n", with: "\\n") + "\n").utf8)
        _ = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
    }

    static func format(label: String, event: LogEvent, metadata: Logger.Metadata) -> String {
        "\(event.level) [\(label)] \(event.message) \(fields(event, metadata))"
    }

    /// The handler's and the event's metadata as `key=value`, sorted by key.
    static func fields(_ event: LogEvent, _ metadata: Logger.Metadata) -> String {
        metadata.merging(event.metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}

/// A handler that passes every event, at every level, with its metadata to `sink`.
struct TraceLineHandler: LogHandler {
    let sink: @Sendable (LogEvent, Logger.Metadata) -> Void
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { sink(event, metadata) }
}
