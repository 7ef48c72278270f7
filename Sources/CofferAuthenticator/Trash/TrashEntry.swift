import Foundation

/// One thing an ``AccountTrash`` keeps: an account and the mechanisms taken from it, or (for a
/// rename) the account with the names it had.
public struct TrashEntry: Codable, Sendable, Equatable {
    /// Eight hex digits: what ``AuthenticatorClient/restore(trashID:replacing:)-neji`` takes.
    public var id: String
    /// When it was taken away.
    public var trashedAt: Date
    /// What took it away: `removed`, `replaced by add --replace`, `overwritten by import`,
    /// `renamed`, `replaced by restore`, `renamed by restore`.
    public var reason: String
    /// The account as it was (for a rename: with the names it had).
    public var account: Account
    /// The mechanisms taken away (none for a rename).
    public var mechanisms: [Mechanism]

    /// An entry with these values.
    public init(id: String, trashedAt: Date, reason: String, account: Account, mechanisms: [Mechanism]) {
        self.id = id
        self.trashedAt = trashedAt
        self.reason = reason
        self.account = account
        self.mechanisms = mechanisms
    }

    /// A new random id: eight hex digits.
    public static func newID() -> String {
        String(format: "%08x", UInt32.random(in: 0...UInt32.max))
    }

    /// Whether `text` has the form of an id (eight hex digits).
    public static func isID(_ text: String) -> Bool {
        text.count == 8 && text.allSatisfy(\.isHexDigit)
    }
}

/// Something in a trash that does not open as an entry (damaged, swapped, planted, or sealed
/// under a key that cannot be used now), and why. It blocks nothing; emptying the trash removes it.
public struct DamagedTrashEntry: Sendable, Equatable {
    /// Its name in the trash (an entry's id, when it has the form of one).
    public var name: String
    /// Why it does not open.
    public var why: String

    /// A damaged entry.
    public init(name: String, why: String) {
        self.name = name
        self.why = why
    }
}
