import CofferMFAEngine
import Foundation

/// RFC 4648 base32, decoded leniently the way people type and paste OATH secrets.
public enum Base32 {
    /// Why a secret is not base32.
    public enum DecodingError: Error, Sendable, Equatable {
        /// Nothing was left after removing spaces, dashes and padding.
        case empty
        /// A character outside `A–Z`, `2–7` (in either case).
        case invalidCharacter(Character, position: Int)
    }

    /// Decodes `text`, ignoring case, spaces, `-` and any amount of `=` padding. Trailing bits
    /// that do not fill a byte are dropped.
    public static func decode(_ text: String) throws(DecodingError) -> Data {
        let decoded: (bytes: Data, symbols: Int)
        do {
            decoded = try Base32Codec.decodeSecret(text)
        } catch {
            let position = error.position
            let offset = text.index(text.startIndex, offsetBy: position)
            throw .invalidCharacter(text[offset], position: position)
        }
        guard decoded.symbols > 0 else { throw .empty }
        return decoded.bytes
    }

    /// Encodes `data` without padding (as OATH URIs usually carry it).
    public static func encode(_ data: Data) -> String {
        Base32Codec.encode(data)
    }
}

extension Base32.DecodingError: LocalizedError {
    /// What is wrong with the secret: that it is empty, or the position of the first character that
    /// is not base32 (the character itself is not repeated: it is part of a secret).
    public var errorDescription: String? {
        switch self {
        case .empty: return "the secret is empty"
        case let .invalidCharacter(_, position):
            return "the secret is not base32: character \(position + 1) is not a letter A–Z or a digit 2–7"
        }
    }
}

extension Base32.DecodingError: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The ``errorDescription``: the character, a part of the secret, is never shown.
    public var description: String { errorDescription ?? "the secret is not base32" }

    /// The same as ``description``, for `debugPrint` and string interpolation of the error.
    public var debugDescription: String { description }

    /// Only ``description``, so `dump(_:)` and the debugger do not show the character either.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
