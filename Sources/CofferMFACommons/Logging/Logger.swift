import Logging

/// Where the Oath and Push modules log, as Ping's `PingLogger` declares it: four levels,
/// the last two with an optional error.
///
/// Ping's name collides with swift-log's `Logger` in a file that imports both; write
/// `CofferMFACommons.Logger` or `Logging.Logger` there. A swift-log `Logger` is a `Logger` of
/// this kind too, so `config.logger = Logging.Logger(label: "app")` sends the SDK's lines to
/// the app's log handler.
///
/// Nothing Coffer logs through it carries a secret, a challenge or a code.
public protocol Logger: Sendable {
    /// Debug detail.
    func d(_ message: String)
    /// Information.
    func i(_ message: String)
    /// Something went wrong and was handled.
    func w(_ message: String, error: Error?)
    /// Something went wrong and was not.
    func e(_ message: String, error: Error?)
}

/// A swift-log logger is a Ping logger too: `d` logs at debug, `i` at info, `w` at warning and
/// `e` at error, the error's description appended.
extension Logging.Logger: Logger {
    /// Logs `message` at `.debug`.
    public func d(_ message: String) { debug("\(message)") }
    /// Logs `message` at `.info`.
    public func i(_ message: String) { info("\(message)") }
    /// Logs `message` and the error's description at `.warning`.
    public func w(_ message: String, error: Error?) { warning("\(loggedLine(message, error))") }
    /// Logs `message` and the error's description at `.error`.
    public func e(_ message: String, error: Error?) { self.error("\(loggedLine(message, error))") }
}

/// A message and its error in one line, as Ping's `StandardLogger` writes them:
/// `message, Error: <description>`.
func loggedLine(_ message: String, _ error: Error?) -> String {
    guard let error else { return message }
    return "\(message), Error: \(error.localizedDescription)"
}
