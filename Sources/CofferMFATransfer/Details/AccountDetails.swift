import Foundation

/// What authenticator apps keep beside an account's secret: the user's note (where people keep
/// recovery codes), the groups it is filed under, whether it is a favourite, and the name of
/// its icon.
///
/// Imports carry it from the formats that have it (Aegis: note, favourite, groups; andOTP:
/// tags, thumbnail; 2FAS: group; Bitwarden: notes, favourite, folder); the stores keep it
/// sealed like the secret; Aegis exports write it back. A note can hold secrets, so neither
/// `description` nor `dump` shows it.
public struct AccountDetails: Codable, Sendable, Hashable {
    /// The user's note: free text, perhaps recovery codes.
    public var note: String?
    /// The groups (folders, tags) the account is filed under, by name.
    public var groups: [String]
    /// Whether the user marked the account a favourite.
    public var isFavorite: Bool
    /// The name of the account's icon in the app it came from (an andOTP thumbnail, say);
    /// Coffer keeps names, never image data.
    public var icon: String?

    /// The most a note may be: a page of recovery codes is a few hundred characters.
    public static let noteLimit = 16 << 10
    /// The most groups an account may be filed under, and the longest a group's or icon's name.
    public static let groupLimit = 64, nameLimit = 256

    /// Details; empty strings and repeated groups are dropped.
    public init(note: String? = nil, groups: [String] = [], isFavorite: Bool = false, icon: String? = nil) {
        self.note = note.flatMap { $0.isEmpty ? nil : $0 }
        var seen = Set<String>()
        self.groups = groups.filter { !$0.isEmpty && seen.insert($0).inserted }
        self.isFavorite = isFavorite
        self.icon = icon.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether there is nothing to keep: no note, group, favourite mark or icon.
    public var isEmpty: Bool { note == nil && groups.isEmpty && !isFavorite && icon == nil }

    /// `nil` when empty: the form stores keep (an account without details stores none).
    public var nonEmpty: AccountDetails? { isEmpty ? nil : self }

    /// Why these details cannot be kept, or `nil`: a note over ``noteLimit`` bytes, more than
    /// ``groupLimit`` groups, or a name over ``nameLimit`` bytes.
    public var problem: String? {
        if let note, note.utf8.count > Self.noteLimit { return "its note is longer than \(Self.noteLimit / 1024) KiB" }
        if groups.count > Self.groupLimit { return "it is in more than \(Self.groupLimit) groups" }
        if groups.contains(where: { $0.utf8.count > Self.nameLimit }) || (icon?.utf8.count ?? 0) > Self.nameLimit {
            return "a group's or the icon's name is longer than \(Self.nameLimit) bytes"
        }
        return nil
    }

    /// `self`, with what `other` has that `self` lacks: its note when `self` has none, its
    /// groups added, its favourite mark, its icon when `self` has none. `nil` when the two notes
    /// differ (neither may be dropped).
    public func merged(with other: AccountDetails) -> AccountDetails? {
        if let note, let otherNote = other.note, note != otherNote { return nil }
        return AccountDetails(note: note ?? other.note, groups: groups + other.groups, isFavorite: isFavorite || other.isFavorite,
                              icon: icon ?? other.icon)
    }

    private enum CodingKeys: String, CodingKey {
        case note, groups, isFavorite = "favorite", icon
    }

    /// Reads what ``encode(to:)`` writes; a missing part is empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(note: try container.decodeIfPresent(String.self, forKey: .note),
                  groups: try container.decodeIfPresent([String].self, forKey: .groups) ?? [],
                  isFavorite: try container.decodeIfPresent(Bool.self, forKey: .isFavorite) ?? false,
                  icon: try container.decodeIfPresent(String.self, forKey: .icon))
    }

    /// Writes the parts that are set.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(note, forKey: .note)
        if !groups.isEmpty { try container.encode(groups, forKey: .groups) }
        if isFavorite { try container.encode(true, forKey: .isFavorite) }
        try container.encodeIfPresent(icon, forKey: .icon)
    }
}

extension AccountDetails: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The groups, favourite mark and icon; the note only as `note: <redacted>`.
    public var description: String {
        var parts: [String] = []
        if note != nil { parts.append("note: <redacted>") }
        if !groups.isEmpty { parts.append("groups: \(groups)") }
        if isFavorite { parts.append("favorite") }
        if let icon { parts.append("icon: \(icon)") }
        return "AccountDetails(\(parts.joined(separator: ", ")))"
    }

    /// The same as ``description``: the note stays out of `debugPrint` too.
    public var debugDescription: String { description }

    /// Only ``description``, so `dump(_:)` and the debugger cannot reveal the note.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
