import CofferMFAEngine
import Foundation

/// A one-time password and the time it is good for.
public struct OathCode: Sendable, Hashable {
    /// The code, zero-padded to its number of digits.
    public let code: String
    /// When the code became valid (TOTP), or when it was generated (HOTP).
    public let validFrom: Date
    /// When a TOTP code stops being valid; `nil` for HOTP, which is valid until used.
    public let validUntil: Date?
    /// HOTP: the counter value the code was computed with (the stored counter is now one more);
    /// `nil` for TOTP and Steam.
    public private(set) var counter: UInt64? = nil

    /// Seconds left until ``validUntil`` at `now`, or `nil` for HOTP.
    public func secondsRemaining(at now: Date = Date()) -> Int? {
        validUntil.map { max(0, Int(($0.timeIntervalSince(now)).rounded(.up))) }
    }
}

/// Computes HOTP (RFC 4226) and TOTP (RFC 6238) codes for this module's models, through the
/// one engine Coffer has (shared with CofferOath).
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
        do { return try OneTimePassword.hotp(key: secret, counter: counter, digits: digits, hash: algorithm.hash) } catch { throw Failure(error) }
    }

    /// The TOTP code at `date`, with its validity window.
    public static func totp(
        secret: Data, at date: Date = Date(), period: Int = 30, digits: Int = 6, algorithm: OathAlgorithm = .sha1
    ) throws(Failure) -> OathCode {
        guard period > 0 else { throw .invalidPeriod(period) }
        guard (6...8).contains(digits) else { throw .invalidDigits(digits) }
        do {
            let code = try OneTimePassword.totp(key: secret, at: date, period: period, digits: digits, hash: algorithm.hash)
            return OathCode(code: code.code, validFrom: code.start, validUntil: code.end)
        } catch { throw Failure(error) }
    }

    /// The Steam Guard code at `date`: the 31-bit HOTP value of the 30-second step (SHA-1), as 5
    /// characters of Steam's alphabet, least significant first.
    public static func steam(secret: Data, at date: Date = Date()) throws(Failure) -> OathCode {
        do {
            let code = try OneTimePassword.steam(key: secret, at: date)
            return OathCode(code: code.code, validFrom: code.start, validUntil: code.end)
        } catch { throw Failure(error) }
    }
}

extension OathGenerator.Failure {
    init(_ failure: OneTimePassword.Failure) {
        switch failure {
        case .invalidDigits(let digits): self = .invalidDigits(digits)
        case .invalidPeriod(let period): self = .invalidPeriod(period)
        case .emptySecret: self = .emptySecret
        }
    }
}

extension OathAlgorithm {
    /// The engine's name for this algorithm.
    var hash: OneTimePassword.Hash {
        switch self {
        case .sha1: .sha1
        case .sha256: .sha256
        case .sha384: .sha384
        case .sha512: .sha512
        case .md5: .md5
        }
    }
}

extension Mechanism {
    /// The identity of this mechanism's HMAC key: one for every spelling of one secret (case,
    /// spaces, padding, and the zero bytes HMAC pads a short key with), so "is this the same
    /// secret?" has one answer everywhere. `nil` for push, and for a secret that is not base32.
    package var keyIdentity: OathKeyIdentity? {
        guard type != .push, let bytes = try? Base32.decode(secret) else { return nil }
        return OathKeyIdentity(key: bytes, hash: algorithm.hash)
    }
}
