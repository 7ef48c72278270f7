import CofferMFAEngine
import Foundation

extension OathCredential {
    /// Ping's checks before a credential is added or saved: digits 4–8; TOTP period 1–300;
    /// HOTP counter from 0; a secret of 1–1024 characters; issuer and account name of 1–256.
    /// Coffer also refuses a secret that is not base32 here, not at the first code.
    package func validate() throws {
        guard (4...8).contains(digits) else { throw OathError.invalidParameterValue("Digits must be between 4 and 8") }
        if oathType == .totp, !(1...300).contains(period) { throw OathError.invalidParameterValue("Period must be between 1 and 300 seconds") }
        if oathType == .hotp, counter < 0 { throw OathError.invalidParameterValue("Counter must be non-negative") }
        guard !secretKey.isEmpty else { throw OathError.invalidSecret("Secret key cannot be empty") }
        guard secretKey.count <= 1024 else { throw OathError.invalidSecret("Secret key exceeds maximum length of 1024") }
        _ = try key()
        guard !issuer.isEmpty else { throw OathError.invalidParameterValue("Issuer cannot be empty") }
        guard issuer.count <= 256 else { throw OathError.invalidParameterValue("Issuer exceeds maximum length of 256") }
        guard !accountName.isEmpty else { throw OathError.invalidParameterValue("Account name cannot be empty") }
        guard accountName.count <= 256 else { throw OathError.invalidParameterValue("Account name exceeds maximum length of 256") }
    }

    /// The key bytes of the base32 secret (case, spaces, `-` and padding ignored, as Coffer's
    /// one base32 reader takes them everywhere).
    func key() throws -> Data {
        let decoded: (bytes: Data, symbols: Int)
        do {
            decoded = try Base32Codec.decodeSecret(secretKey)
        } catch {
            let position = error.position
            throw OathError.invalidSecret("character \(position + 1) is not a letter A–Z or a digit 2–7")
        }
        guard !decoded.bytes.isEmpty else { throw OathError.invalidSecret("the secret holds no whole byte of key") }
        return decoded.bytes
    }

    /// The hash the credential's codes are made with.
    var oneTimePasswordHash: OneTimePassword.Hash {
        switch oathAlgorithm {
        case .sha1: .sha1
        case .sha256: .sha256
        case .sha512: .sha512
        }
    }

    /// The HMAC key this credential's codes come from, however its secret is spelled (what the
    /// HOTP counter memory names it by); `nil` when the secret is not base32.
    package var keyIdentity: OathKeyIdentity? {
        guard let key = try? key() else { return nil }
        return OathKeyIdentity(key: key, hash: oneTimePasswordHash)
    }

    /// The code for this credential: at `now` for TOTP, for the stored counter for HOTP.
    func code(at now: Date = Date()) throws -> OathCodeInfo {
        do {
            let hash = oneTimePasswordHash
            switch oathType {
            case .totp:
                guard period > 0 else { throw OathError.invalidParameterValue("period must be positive") }
                let code = try OneTimePassword.totp(key: try key(), at: now, period: period, digits: digits, hash: hash)
                // Ping's rule: whole seconds to the end of the step, 1…period.
                let remaining = Int(code.end.timeIntervalSince1970) - Int(now.timeIntervalSince1970)
                return .forTotp(code: code.code, timeRemaining: remaining, totalPeriod: period)
            case .hotp:
                guard counter >= 0, counter < Int.max else { throw OathError.invalidParameterValue("counter must be from 0 to \(Int.max - 1)") }
                let code = try OneTimePassword.hotp(key: try key(), counter: UInt64(counter), digits: digits, hash: hash)
                return .forHotp(code: code, counter: counter + 1)
            }
        } catch {
            throw OathError.codeGenerationFailed("Code generation failed", error)
        }
    }
}
