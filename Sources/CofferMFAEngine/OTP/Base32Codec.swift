import Foundation

/// The one RFC 4648 base32 codec of Coffer. Callers choose what a secret may carry besides the
/// alphabet: CofferAuthenticator's `Base32` skips spaces, dashes and padding anywhere, as people
/// type secrets; Ping's `Data(base32Encoded:)` trims the ends and refuses the rest.
package enum Base32Codec {
    /// Why text is not base32.
    package enum Failure: Error, Sendable, Equatable {
        /// A character outside `A–Z`, `2–7` (in either case) and outside the skipped set, at
        /// this offset (in characters). The character itself is not kept: it is part of a secret.
        case invalidCharacter(position: Int)

        /// The offset of the character.
        package var position: Int {
            switch self { case .invalidCharacter(let position): position }
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    private static let values: [UInt8: UInt8] = Dictionary(uniqueKeysWithValues: alphabet.enumerated().map { ($1, UInt8($0)) })

    /// Decodes `text`, ignoring case and every character in `skipping`. Trailing bits that do
    /// not fill a byte are dropped; `symbols` is how many alphabet characters were read.
    package static func decode(_ text: some StringProtocol, skipping: Set<Character> = []) throws(Failure) -> (bytes: Data, symbols: Int) {
        var output = Data()
        output.reserveCapacity(text.utf8.count * 5 / 8)
        var buffer: UInt32 = 0
        var bits = 0
        var symbols = 0
        for (position, character) in text.enumerated() {
            if skipping.contains(character) { continue }
            guard let ascii = character.asciiValue, let value = values[ascii & ~0x20] ?? values[ascii] else {
                throw .invalidCharacter(position: position)
            }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            symbols += 1
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return (output, symbols)
    }

    /// Decodes a secret as people type and paste it: case, spaces, tabs, `-` and `=` anywhere
    /// ignored. Every reader of a stored or typed secret uses this one rule.
    package static func decodeSecret(_ text: some StringProtocol) throws(Failure) -> (bytes: Data, symbols: Int) {
        try decode(text, skipping: [" ", "-", "=", "\t"])
    }

    /// Encodes `data`, padded with `=` to a multiple of 8 characters when `padded`.
    package static func encode(_ data: Data, padded: Bool = false) -> String {
        var output = [UInt8]()
        output.reserveCapacity((data.count * 8 + 4) / 5 + 6)
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
        if padded { output += Array(repeating: UInt8(ascii: "="), count: (8 - output.count % 8) % 8) }
        return String(decoding: output, as: UTF8.self)
    }
}
