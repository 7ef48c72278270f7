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
        guard columns.allSatisfy(isPlain) else { return "\(base)#v\(version)" + jsonArray(columns) }
        // Written into one buffer of the exact size, column by column: appending to a String
        // checks and updates its encoding flags at every step, and appending a String's UTF-8
        // view to an array walks it byte by byte; this was most of what a listing spent here.
        var parts = [base, "#v\(version)["]
        for (index, value) in columns.enumerated() {
            parts.append(index == 0 ? "\"" : ",\"")
            parts.append(value)
            parts.append("\"")
        }
        parts.append("]")
        let size = parts.reduce(0) { $0 + $1.utf8.count }
        return String(unsafeUninitializedCapacity: size) { buffer in
            var offset = 0
            for var part in parts {
                part.withUTF8 { bytes in
                    guard let start = bytes.baseAddress, !bytes.isEmpty else { return }  // an empty column
                    buffer.baseAddress!.advanced(by: offset).update(from: start, count: bytes.count)
                    offset += bytes.count
                }
            }
            return offset
        }
    }

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
        value.utf8.allSatisfy { byte in byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "/") }
    }

    /// An optional column as a bound value: `-` for none, `=` and the value otherwise, so an
    /// empty value and no value differ.
    package static func optional(_ value: String?) -> String {
        value.map { "=" + $0 } ?? "-"
    }
}
