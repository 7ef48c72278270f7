import Foundation

/// Ping's internal base32 helper, by its name, for code written against Ping's modules: a thin
/// front on Coffer's one codec (`Data(base32Encoded:)` and `base32EncodedString()`).
enum Base32 {
    /// Decodes `base32String` as `Data(base32Encoded:)` does. With `strict`, RFC 4648's padding
    /// is required too: `=` only at the end, 0, 1, 3, 4 or 6 of them, the whole a multiple of 8
    /// characters, and not empty.
    static func decode(_ base32String: String, strict: Bool = false) -> Data? {
        if strict {
            let text = base32String.trimmingCharacters(in: .whitespacesAndNewlines)
            let padding = text.reversed().prefix { $0 == "=" }.count
            guard !text.isEmpty, text.count % 8 == 0, [0, 1, 3, 4, 6].contains(padding),
                  !text.dropLast(padding).contains("=") else { return nil }
        }
        return Data(base32Encoded: base32String)
    }

    /// `data` as base32, padded with `=` to a multiple of 8, as Ping's helper writes it.
    static func encode(_ data: Data) -> String {
        data.base32EncodedString()
    }
}
