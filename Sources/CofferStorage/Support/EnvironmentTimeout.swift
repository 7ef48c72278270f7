import Foundation

/// A timeout read from an environment variable (`COFFER_KEYRING_TIMEOUT`,
/// `COFFER_DATABASE_TIMEOUT`): a whole number of seconds from 1 to 3600, else the default. A
/// value that is not such a number is ignored, so a typo never turns a deadline off.
package enum EnvironmentTimeout {
    /// The timeout `value` (the variable's text) asks for, or `fallback` when it asks for none.
    package static func parse(_ value: String?, fallback: Duration = .seconds(10)) -> Duration {
        guard let value, let seconds = Int(value), (1...3600).contains(seconds) else { return fallback }
        return .seconds(seconds)
    }

    /// The timeout the environment variable `name` asks for, or `fallback`.
    package static func named(_ name: String, fallback: Duration = .seconds(10)) -> Duration {
        parse(ProcessEnvironment.value(name), fallback: fallback)
    }
}
