import Foundation

extension Sequence where Element == UInt8 {
    /// The bytes as lower-case hexadecimal: digests, fingerprints, vault fields.
    package var hexString: String {
        var text = ""
        for byte in self {
            text += String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16)
        }
        return text
    }
}

extension Data {
    /// The bytes of `hex` (lower- or upper-case, an even number of digits), or `nil` when it is
    /// not hexadecimal.
    package init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes = Data(capacity: digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Character(Unicode.Scalar(digits[index])).hexDigitValue,
                  let low = Character(Unicode.Scalar(digits[index + 1])).hexDigitValue else { return nil }
            bytes.append(UInt8(high << 4 | low))
        }
        self = bytes
    }
}
