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
        var identity = String()
        identity.reserveCapacity(base.utf8.count + 4 + columns.reduce(2) { $0 + $1.utf8.count + 3 })
        identity += base
        identity += "#v\(version)"
        appendJSONArray(columns, to: &identity)
        return identity
    }

    /// `values` as Foundation's `JSONEncoder` writes a `[String]`, byte for byte (identities
    /// sealed since 0.2.0 must keep opening). Strings with nothing `JSONEncoder` escapes (a
    /// quote, a backslash, a slash, a control character) are written directly, into one string
    /// with room reserved, which is what makes listing thousands of rows fast; any other goes
    /// through `JSONEncoder` itself.
    package static func jsonArray(_ values: [String]) -> String {
        var array = String()
        appendJSONArray(values, to: &array)
        return array
    }

    private static func appendJSONArray(_ values: [String], to text: inout String) {
        let plain = values.allSatisfy { value in
            value.utf8.allSatisfy { byte in byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "/") }
        }
        guard plain else {
            text += (try? JSONEncoder().encode(values)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
            return
        }
        text += "["
        for (index, value) in values.enumerated() {
            text += index == 0 ? "\"" : ",\""
            text += value
            text += "\""
        }
        text += "]"
    }

    /// An optional column as a bound value: `-` for none, `=` and the value otherwise, so an
    /// empty value and no value differ.
    package static func optional(_ value: String?) -> String {
        value.map { "=" + $0 } ?? "-"
    }
}
