import CofferMFAEngine
import Foundation

/// Ping's base32 and base64url helpers.
extension Data {
    /// Decodes base32 as Ping does: the ends trimmed of whitespace, upper-cased, `=` stripped
    /// from both ends; any other character outside `A–Z2–7` (inner spaces, `-`) or 10,000
    /// characters or more gives `nil`; empty text gives empty data. Trailing partial bits are
    /// dropped.
    public init?(base32Encoded base32String: String) {
        let trimmed = base32String.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count < 10_000 else { return nil }
        let unpadded = trimmed.drop { $0 == "=" }.reversed().drop { $0 == "=" }.reversed()
        guard let decoded = try? Base32Codec.decode(String(unpadded)) else { return nil }
        self = decoded.bytes
    }

    /// The data as base32, padded with `=` to a multiple of 8.
    public func base32EncodedString() -> String {
        Base32Codec.encode(self, padded: true)
    }

    /// The bytes.
    public var bytesArray: [UInt8] { [UInt8](self) }

    /// The data as base64url without padding.
    public func base64URLEncodedString() -> String {
        base64EncodedString().urlSafeEncoding()
    }
}
