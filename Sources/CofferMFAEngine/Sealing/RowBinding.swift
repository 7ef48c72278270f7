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
        let encoded = (try? JSONEncoder().encode(columns)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        return "\(base)#v\(version)" + encoded
    }

    /// An optional column as a bound value: `-` for none, `=` and the value otherwise, so an
    /// empty value and no value differ.
    package static func optional(_ value: String?) -> String {
        value.map { "=" + $0 } ?? "-"
    }
}
