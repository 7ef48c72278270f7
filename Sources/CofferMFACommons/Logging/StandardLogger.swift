import Logging

/// Writes every line through swift-log, prefixed with Coffer's version, where Ping's writes to
/// `os_log`. Warnings go out at `.error` and errors at `.critical`, as Ping maps `w` and `e`.
public final class StandardLogger: Logger {
    private let log: Logging.Logger

    /// A logger writing to `log` (default: a swift-log logger labelled `org.coffer.mfa`), the
    /// stand-in for Ping's `OSLog` parameter.
    public init(log: Logging.Logger? = nil) {
        self.log = log ?? Logging.Logger(label: "org.coffer.mfa")
    }

    public func d(_ message: String) { log.debug("\(Self.prefix)\(message)") }
    public func i(_ message: String) { log.info("\(Self.prefix)\(message)") }
    public func w(_ message: String, error: Error?) { log.error("\(Self.prefix)\(loggedLine(message, error))") }
    public func e(_ message: String, error: Error?) { log.critical("\(Self.prefix)\(loggedLine(message, error))") }

    static let prefix = "[Coffer MFA] "
}

/// Writes warnings and errors only, like ``StandardLogger``; `d` and `i` do nothing.
///
/// Ping's `WarningLogger` is a subclass of `StandardLogger`; here both are final classes (so
/// their `Sendable` conformance is checked) and `WarningLogger` holds a `StandardLogger`.
public final class WarningLogger: Logger {
    private let standard: StandardLogger

    /// A logger writing warnings and errors to `log` (default as ``StandardLogger``).
    public init(log: Logging.Logger? = nil) {
        standard = StandardLogger(log: log)
    }

    public func d(_ message: String) {}
    public func i(_ message: String) {}
    public func w(_ message: String, error: Error?) { standard.w(message, error: error) }
    public func e(_ message: String, error: Error?) { standard.e(message, error: error) }
}
