import Crypto
import Foundation

/// A one-time password and the time it is good for.
public struct OathCode: Sendable, Hashable {
    /// The code, zero-padded to its number of digits.
    public let code: String
    /// When the code became valid (TOTP), or when it was generated (HOTP).
    public let validFrom: Date
    /// When a TOTP code stops being valid; `nil` for HOTP, which is valid until used.
    public let validUntil: Date?

    /// Seconds left until ``validUntil`` at `now`, or `nil` for HOTP.
    public func secondsRemaining(at now: Date = Date()) -> Int? {
        validUntil.map { max(0, Int(($0.timeIntervalSince(now)).rounded(.up))) }
    }
}

/// Computes HOTP (RFC 4226) and TOTP (RFC 6238) codes.
public enum OathGenerator {
    /// Why a code cannot be computed.
    public enum Failure: Error, Sendable, Equatable {
        /// Digits outside 6…8.
        case invalidDigits(Int)
        /// A period that is not positive.
        case invalidPeriod(Int)
        /// The secret is empty.
        case emptySecret
    }

    /// The HOTP value for `counter`.
    public static func hotp(secret: Data, counter: UInt64, digits: Int = 6, algorithm: OathAlgorithm = .sha1) throws(Failure) -> String {
        guard (6...8).contains(digits) else { throw .invalidDigits(digits) }
        guard !secret.isEmpty else { throw .emptySecret }
        var message = counter.bigEndian
        let mac = withUnsafeBytes(of: &message) { authenticationCode(for: Data($0), key: SymmetricKey(data: secret), algorithm: algorithm) }
        let binary = truncated(mac)
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The TOTP code at `date`, with its validity window.
    public static func totp(
        secret: Data, at date: Date = Date(), period: Int = 30, digits: Int = 6, algorithm: OathAlgorithm = .sha1
    ) throws(Failure) -> OathCode {
        guard period > 0 else { throw .invalidPeriod(period) }
        let seconds = max(0, date.timeIntervalSince1970)
        let step = UInt64(seconds) / UInt64(period)
        let start = Date(timeIntervalSince1970: TimeInterval(step * UInt64(period)))
        return OathCode(
            code: try hotp(secret: secret, counter: step, digits: digits, algorithm: algorithm),
            validFrom: start,
            validUntil: start.addingTimeInterval(TimeInterval(period)))
    }

    /// The characters of a Steam Guard code.
    static let steamAlphabet = Array("23456789BCDFGHJKMNPQRTVWXY")

    /// The Steam Guard code at `date`: the 31-bit HOTP value of the 30-second step (SHA-1), as 5
    /// characters of `steamAlphabet`, least significant first.
    public static func steam(secret: Data, at date: Date = Date()) throws(Failure) -> OathCode {
        guard !secret.isEmpty else { throw .emptySecret }
        let step = UInt64(max(0, date.timeIntervalSince1970)) / 30
        var value = truncated(authenticationCode(for: withUnsafeBytes(of: step.bigEndian) { Data($0) }, key: SymmetricKey(data: secret), algorithm: .sha1))
        var code = ""
        for _ in 0..<5 {
            code.append(steamAlphabet[Int(value % UInt32(steamAlphabet.count))])
            value /= UInt32(steamAlphabet.count)
        }
        let start = Date(timeIntervalSince1970: TimeInterval(step * 30))
        return OathCode(code: code, validFrom: start, validUntil: start.addingTimeInterval(30))
    }

    /// Dynamic truncation (RFC 4226 section 5.3) of `mac` to a 31-bit value. The RFC assumes a
    /// MAC of at least 20 bytes; MD5's is 16, so for it the offset is kept in range (SHA MACs
    /// are unaffected).
    private static func truncated(_ mac: [UInt8]) -> UInt32 {
        let offset = Int(mac[mac.count - 1] & 0x0F) % (mac.count - 3)
        return (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
    }

    private static func authenticationCode(for message: Data, key: SymmetricKey, algorithm: OathAlgorithm) -> [UInt8] {
        switch algorithm {
        case .sha1: Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        case .sha256: Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        case .sha384: Array(HMAC<SHA384>.authenticationCode(for: message, using: key))
        case .sha512: Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
        case .md5: Array(HMAC<Insecure.MD5>.authenticationCode(for: message, using: key))
        }
    }
}
