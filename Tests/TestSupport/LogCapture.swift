import Logging
import Synchronization

/// Collects log lines in memory so tests can check what was (and was not) logged.
public final class LogCapture: Sendable {
    public struct Entry: Sendable {
        public let level: Logger.Level
        public let text: String
    }

    private let entries = Mutex<[Entry]>([])

    public init() {
        _ = SuiteTraceLog.installed
    }

    public var all: [Entry] { entries.withLock { $0 } }

    /// A logger at `trace` level that writes here.
    public func logger(_ label: String = "test") -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.append(Entry(level: event.level, text: "\(event.message) \(SuiteTraceLog.fields(event, metadata))"))
            SuiteTraceLog.write(SuiteTraceLog.format(label: "capture", event: event, metadata: metadata))
        }
    }
}
