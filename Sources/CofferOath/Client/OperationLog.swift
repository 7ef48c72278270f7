import CofferMFACommons
import CofferStorage

/// The level of the line that says how an operation ended.
enum OutcomeLevel { case debug, info }

extension CofferMFACommons.Logger {
    /// Runs `body` between Ping's log lines: `start` at debug level, then what `success` makes
    /// of the result at the level it says, or `failure` and the error (never a secret) at error
    /// level. Ids and errors quote the caller's or the store's text: control characters are
    /// escaped. `OathClient` and `OathKeychainStorage` log through it.
    func logged<R>(_ start: String, failure: String, success: (R) -> (level: OutcomeLevel, message: String),
                   _ body: () async throws -> R) async throws -> R {
        d(TerminalText.escaped(start))
        do {
            let result = try await body()
            let (level, message) = success(result)
            if level == .info { i(TerminalText.escaped(message)) } else { d(TerminalText.escaped(message)) }
            return result
        } catch {
            e(TerminalText.escaped("\(failure): \(error)"), error: error)
            throw error
        }
    }
}
