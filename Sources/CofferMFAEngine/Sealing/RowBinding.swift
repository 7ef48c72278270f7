import Foundation

/// What a sealed field in a SQL row is bound to: where it belongs (`mechanism/<uuid>/secret`)
/// and the plain columns that decide what it is used for (issuer, account, type, counter, …),
/// written into the identity the field is sealed under. A sealed value copied to another row,
/// or a row whose bound columns were edited, no longer opens: the row reads as damaged, never
/// as another account's secret or a rolled-back counter.
package enum RowBinding {
    /// The binding version these identities carry.
    package static let version = 2

    /// `base`, the version, and `columns` as a JSON array of strings: unambiguous whatever the
    /// values contain, and the same bytes every time for the same values.
    package static func identity(_ base: String, columns: [String]) -> String {
        // Written into one buffer of the exact size, byte by byte, each column checked as it is
        // copied: appending to a String checks and updates its encoding flags at every step,
        // and the arrays of parts this used to build cost as much again; this is most of what
        // a listing of thousands of rows spends here.
        var size = base.utf8.count + versionTag.utf8.count + max(columns.count - 1, 0) + 1
        for value in columns { size += value.utf8.count + 2 }
        var plain = true
        let written = String(unsafeUninitializedCapacity: size) { buffer in
            var offset = 0
            func put(_ byte: UInt8) {
                buffer[offset] = byte
                offset += 1
            }
            /// Copies `bytes`; `false` (stopping) at a byte `JSONEncoder` would escape.
            func put(_ bytes: some Sequence<UInt8>, checked: Bool) -> Bool {
                for byte in bytes {
                    if checked, !isPlain(byte) { return false }
                    put(byte)
                }
                return true
            }
            /// Copies `text`, from its contiguous storage when it has one.
            func put(_ text: String, checked: Bool) -> Bool {
                text.utf8.withContiguousStorageIfAvailable { put($0, checked: checked) } ?? put(text.utf8, checked: checked)
            }
            _ = put(base, checked: false)
            _ = put(versionTag, checked: false)
            for (index, value) in columns.enumerated() {
                if index > 0 { put(UInt8(ascii: ",")) }
                put(UInt8(ascii: "\""))
                guard put(value, checked: true) else {
                    plain = false
                    return 0
                }
                put(UInt8(ascii: "\""))
            }
            put(UInt8(ascii: "]"))
            return offset
        }
        return plain ? written : "\(base)#v\(version)" + jsonArray(columns)
    }

    /// What follows the base of every identity, up to its first column.
    private static let versionTag = "#v\(version)["

    /// `values` as Foundation's `JSONEncoder` writes a `[String]`, byte for byte (identities
    /// sealed since 0.2.0 must keep opening). Strings with nothing `JSONEncoder` escapes (a
    /// quote, a backslash, a slash, a control character) are written directly, which is what
    /// makes listing thousands of rows fast; any other goes through `JSONEncoder` itself.
    package static func jsonArray(_ values: [String]) -> String {
        guard values.allSatisfy(isPlain) else {
            return (try? JSONEncoder().encode(values)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        }
        return "[" + values.map { "\"" + $0 + "\"" }.joined(separator: ",") + "]"
    }

    /// Whether `JSONEncoder` writes `value` as it is between quotes.
    private static func isPlain(_ value: String) -> Bool {
        value.utf8.allSatisfy(isPlain)
    }

    /// Whether `JSONEncoder` writes `byte` (of UTF-8 text) as it is between quotes.
    private static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "/")
    }

    /// An optional column as a bound value: `-` for none, `=` and the value otherwise, so an
    /// empty value and no value differ.
    package static func optional(_ value: String?) -> String {
        value.map { "=" + $0 } ?? "-"
    }
}
