/// Whether a credential's codes follow the clock or a counter.
public enum OathType: String, CaseIterable, Codable, Sendable {
    /// Time-based (RFC 6238).
    case totp = "totp"
    /// Counter-based (RFC 4226).
    case hotp = "hotp"

    /// The type named `string`, compared without case.
    public static func fromString(_ string: String) throws -> OathType {
        guard let type = OathType(rawValue: string.lowercased()) else { throw OathError.invalidOathType(string) }
        return type
    }
}

/// The HMAC behind a credential's codes: SHA-1, SHA-256 or SHA-512, as Ping's modules allow.
public enum OathAlgorithm: String, CaseIterable, Codable, Sendable {
    /// HMAC-SHA-1, the default.
    case sha1 = "SHA1"
    /// HMAC-SHA-256.
    case sha256 = "SHA256"
    /// HMAC-SHA-512.
    case sha512 = "SHA512"

    /// The algorithm named `string` (`SHA1`, `sha256`, …), compared without case.
    public static func fromString(_ string: String) throws -> OathAlgorithm {
        guard let algorithm = OathAlgorithm(rawValue: string.uppercased()) else { throw OathError.invalidAlgorithm(string) }
        return algorithm
    }
}
