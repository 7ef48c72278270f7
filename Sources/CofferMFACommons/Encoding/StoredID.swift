/// A stored record's id, told apart from others the way the stores tell them apart: byte for
/// byte, as SQLite's `BINARY` collation and the Secret Service's attribute matching do.
///
/// Swift's `==` and `<` on `String` follow Unicode canonical equivalence: "é" written as one
/// code point and "e" followed by a combining accent are one string to them, but two ids to
/// every store. A set, a dictionary key or a lookup of ids made of `String` would merge two
/// records a store keeps apart, and one of them would be overwritten, deleted or answered for
/// the other. So the storages that hold records in memory or many to one keyring item (memory,
/// the keyring books) key and compare ids as `StoredID`, and order ties by it, which is also
/// the order SQLite gives.
package struct StoredID: Hashable, Comparable, Sendable {
    /// The id as given, for messages and for writing back.
    package let text: String
    /// Its UTF-8 bytes, as written: what equality, hashing and order use.
    package let bytes: [UInt8]

    /// The id `text`.
    package init(_ text: String) {
        self.text = text
        bytes = Array(text.utf8)
    }

    package static func == (lhs: StoredID, rhs: StoredID) -> Bool {
        lhs.bytes == rhs.bytes
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
    }

    /// Byte order, as SQLite's `BINARY` collation compares.
    package static func < (lhs: StoredID, rhs: StoredID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

extension String {
    /// This text as a stored id: compared byte for byte (see ``StoredID``).
    package var storedID: StoredID { StoredID(self) }

    /// Whether this id and `other` are one stored id: the same bytes (see ``StoredID``), compared
    /// without making either one.
    package func isSameStoredID(as other: String) -> Bool {
        utf8.elementsEqual(other.utf8)
    }
}
