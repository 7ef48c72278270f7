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
