import Crypto
import Foundation

/// The one OATH engine of Coffer: HOTP (RFC 4226), TOTP (RFC 6238) and Steam Guard codes over
/// raw key bytes. Both authenticator generations map their own models onto it
/// (`OathGenerator` in CofferAuthenticator, `OathClient` in CofferOath); neither computes a
/// code itself.
package enum OneTimePassword {
    /// The HMAC behind a code.
    package enum Hash: Sendable, CaseIterable {
        case sha1, sha256, sha384, sha512, md5
    }

    /// Why a code cannot be computed.
    package enum Failure: Error, Sendable, Equatable {
        /// Digits outside ``digitRange``.
        case invalidDigits(Int)
        /// A period that is not positive.
        case invalidPeriod(Int)
        /// The key is empty.
        case emptySecret
    }

    /// The code lengths the engine computes. RFC 4226 asks for at least 6; Ping's SDKs accept
    /// 4 and 5, so the engine does, and each model's own validation says what it allows.
    package static let digitRange = 4...9

    /// The HOTP value of `counter`, zero-padded to `digits`.
    package static func hotp(key: Data, counter: UInt64, digits: Int, hash: Hash) throws(Failure) -> String {
        guard digitRange.contains(digits) else { throw .invalidDigits(digits) }
        guard !key.isEmpty else { throw .emptySecret }
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(truncated(authenticationCode(counter: counter, key: key, hash: hash)) % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The TOTP time step that contains `date`, and when it starts and ends.
    package static func step(at date: Date, period: Int) throws(Failure) -> (counter: UInt64, start: Date, end: Date) {
        guard period > 0 else { throw .invalidPeriod(period) }
        let counter = UInt64(max(0, date.timeIntervalSince1970)) / UInt64(period)
        let start = Date(timeIntervalSince1970: TimeInterval(counter * UInt64(period)))
        return (counter, start, start.addingTimeInterval(TimeInterval(period)))
    }

    /// The TOTP code at `date`, with its time step.
    package static func totp(key: Data, at date: Date, period: Int, digits: Int, hash: Hash) throws(Failure)
        -> (code: String, start: Date, end: Date) {
        let step = try step(at: date, period: period)
        return (try hotp(key: key, counter: step.counter, digits: digits, hash: hash), step.start, step.end)
    }

    /// The characters of a Steam Guard code.
    private static let steamAlphabet = Array("23456789BCDFGHJKMNPQRTVWXY")

    /// The Steam Guard code at `date`: the 31-bit HOTP value of the 30-second step (SHA-1), as 5
    /// characters of the Steam alphabet, least significant first.
    package static func steam(key: Data, at date: Date) throws(Failure) -> (code: String, start: Date, end: Date) {
        guard !key.isEmpty else { throw .emptySecret }
        let step = try step(at: date, period: 30)
        var value = truncated(authenticationCode(counter: step.counter, key: key, hash: .sha1))
        var code = ""
        for _ in 0..<5 {
            code.append(steamAlphabet[Int(value % UInt32(steamAlphabet.count))])
            value /= UInt32(steamAlphabet.count)
        }
        return (code, step.start, step.end)
    }

    /// Dynamic truncation (RFC 4226 section 5.3) of `mac` to a 31-bit value. The RFC assumes a
    /// MAC of at least 20 bytes; MD5's is 16, so for it the offset is kept in range (SHA MACs
    /// are unaffected).
    private static func truncated(_ mac: [UInt8]) -> UInt32 {
        let offset = Int(mac[mac.count - 1] & 0x0F) % (mac.count - 3)
        return (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
    }

    /// The HMAC of the counter as 8 bytes, big-endian.
    private static func authenticationCode(counter: UInt64, key: Data, hash: Hash) -> [UInt8] {
        let message = withUnsafeBytes(of: counter.bigEndian) { Data($0) }
        let key = SymmetricKey(data: key)
        switch hash {
        case .sha1: return Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        case .sha256: return Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        case .sha384: return Array(HMAC<SHA384>.authenticationCode(for: message, using: key))
        case .sha512: return Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
        case .md5: return Array(HMAC<Insecure.MD5>.authenticationCode(for: message, using: key))
        }
    }
}
