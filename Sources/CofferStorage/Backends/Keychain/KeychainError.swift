import Foundation

/// Why the OS keyring (the freedesktop Secret Service) could not do what was asked.
public enum KeychainError: Error, Sendable {
    /// The keyring cannot be used here: no libsecret, no D-Bus session bus, no Secret Service
    /// provider, or no default collection. `reason` says which and what to install or start.
    case unavailable(reason: String)
    /// The collection (or the item) is locked. Coffer never shows an unlock prompt.
    case locked
    /// The keyring did not answer within the timeout; the call was cancelled.
    case timedOut
    /// More than one item matches the attributes of one storage; Coffer will not pick one.
    case ambiguous(attributes: [String: String], count: Int)
    /// The keyring or libsecret reported an error: the GError's domain, code and message.
    case failed(domain: String, code: Int, message: String)
}

extension KeychainError: LocalizedError {
    /// What went wrong and what to do next (what to start or unlock, which items to remove); never
    /// a stored secret.
    public var errorDescription: String? {
        switch self {
        case .unavailable(let reason):
            return "The OS keyring (Secret Service) cannot be used: \(reason)."
        case .locked:
            return "The keyring is locked. Unlock it (log in to your desktop session, or unlock the collection in "
                + "Seahorse or KeePassXC), then try again; Coffer never shows an unlock prompt itself."
        case .timedOut:
            return "The keyring did not answer in time. Check that the Secret Service provider (gnome-keyring, "
                + "KeePassXC) is running and not waiting on a prompt, or raise the timeout (COFFER_KEYRING_TIMEOUT, in seconds)."
        case let .ambiguous(attributes, count):
            let query = attributes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " ")
            return "\(count) keyring items match \(query); Coffer will not pick one. Inspect them with "
                + "`secret-tool search --all \(query)` and remove the extra ones."
        case let .failed(domain, code, message):
            return "The keyring reported an error (\(domain) \(code)): \(message)."
        }
    }
}

extension KeychainError: CustomStringConvertible {
    /// The same text as ``errorDescription``, so `print(error)` and string interpolation read well.
    public var description: String { errorDescription ?? "KeychainError" }

    /// The message a person reads (the same as `errorDescription`), under the name Ping's SDK
    /// gives it.
    public var errorMessage: String { description }
}
