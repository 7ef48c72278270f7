import Synchronization

/// The process-wide logger the Oath and Push modules use when a configuration names none
/// (`OathConfiguration.logger`'s default), as Ping's `LogManager` keeps it. It starts as
/// ``NoneLogger``.
public actor LogManager {
    private static let current = Mutex<any Logger>(NoneLogger())

    private init() {}

    /// The logger new configurations take. Setting it does not change configurations made before.
    public static var logger: any Logger {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}

extension LogManager {
    /// A logger that drops every line.
    public static var none: any Logger { NoneLogger() }
    /// A logger that writes every line to swift-log (``StandardLogger``).
    public static var standard: any Logger { StandardLogger() }
    /// A logger that writes warnings and errors only (``WarningLogger``).
    public static var warning: any Logger { WarningLogger() }
}

/// Drops every line.
public final class NoneLogger: Logger {
    /// A logger that drops every line.
    public init() {}
    public func d(_ message: String) {}
    public func i(_ message: String) {}
    public func w(_ message: String, error: Error?) {}
    public func e(_ message: String, error: Error?) {}
}
