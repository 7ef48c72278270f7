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

    /// A logger at `trace` level that writes here (and to the suite's trace log).
    public func logger(_ label: String = "test") -> Logger {
        var logger = Logger(label: label) { _ in
            TraceLineHandler { event, metadata in
                self.append(Entry(level: event.level, text: "\(event.message) \(SuiteTraceLog.fields(event, metadata))"))
                SuiteTraceLog.write(SuiteTraceLog.format(label: "capture", event: event, metadata: metadata))
            }
        }
        logger.logLevel = .trace
        return logger
    }

    private func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }
}
