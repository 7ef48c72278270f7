import Foundation

/// Holds a value's `additionalData` (`[String: Any]`, never persisted), so the value stays
/// `Sendable`: the dictionary is only reached under the box's lock, and a new box replaces the
/// old one instead of changing it, so copies of a value never share a change.
final class AdditionalData: @unchecked Sendable {
    // Unchecked: `[String: Any]` is not Sendable; every access holds `lock`, and the stored
    // dictionary is never mutated after `init`.
    private let lock = NSLock()
    private let value: [String: Any]?

    init(_ value: [String: Any]?) {
        self.value = value
    }

    var dictionary: [String: Any]? {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
