import CofferStorage
import Foundation
import Logging

/// The tool's log lines (shown with `COFFER_LOG_LEVEL`): swift-log's stream format, written to
/// standard error through the same escaping as everything else the tool prints
/// (`StandardStreams.note`), since messages and metadata quote what storage holds (keyring
/// labels, record names, the errors that name them).
struct EscapedLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, logLevel: Logger.Level) {
        self.label = label
        self.logLevel = logLevel
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
        if let given = event.metadata { all.merge(given) { $1 } }
        let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let time = ISO8601DateFormatter().string(from: Date())
        StandardStreams.note("\(time) \(event.level) \(label):\(fields.isEmpty ? "" : " " + fields) [\(event.source)] \(event.message)")
    }
}
