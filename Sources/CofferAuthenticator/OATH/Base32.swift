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

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    private static let values: [UInt8: UInt8] = Dictionary(uniqueKeysWithValues: alphabet.enumerated().map { ($1, UInt8($0)) })

    /// Decodes `text`, ignoring case, spaces, `-` and any amount of `=` padding. Trailing bits
    /// that do not fill a byte are dropped.
    public static func decode(_ text: String) throws(DecodingError) -> Data {
        var output = Data()
        var buffer: UInt32 = 0
        var bits = 0
        var count = 0
        for (position, character) in text.enumerated() {
            if character == " " || character == "-" || character == "=" || character == "\t" { continue }
            guard let ascii = character.asciiValue, let value = values[ascii & ~0x20] ?? values[ascii] else {
                throw .invalidCharacter(character, position: position)
            }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            count += 1
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        guard count > 0 else { throw .empty }
        return output
    }

    /// Encodes `data` without padding (as OATH URIs usually carry it).
    public static func encode(_ data: Data) -> String {
        var output = [UInt8]()
        var buffer: UInt32 = 0
        var bits = 0
        for byte in data {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int(buffer >> UInt32(bits) & 31)])
            }
        }
        if bits > 0 { output.append(alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        return String(decoding: output, as: UTF8.self)
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
