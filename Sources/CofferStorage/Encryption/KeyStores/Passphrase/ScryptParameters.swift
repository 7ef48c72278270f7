import Crypto
import CryptoExtras
import Foundation

/// scrypt's cost, as stored in a passphrase-sealed file: `N = 2^logN`, block size `r`,
/// parallelism `p`. Bounded before any work, so a crafted file cannot make opening it a CPU or
/// memory bomb: at most 128 MiB of memory (`128·r·N`) and 2^22 block operations (`N·r·p`,
/// sixteen times the standard's: a few seconds).
public struct ScryptParameters: Codable, Sendable, Equatable {
    /// log2 of the CPU and memory cost N.
    public var logN: Int
    /// The block size.
    public var r: Int
    /// The parallelism.
    public var p: Int

    /// The default: N = 2^15, r = 8, p = 1 (32 MiB, about a tenth of a second), as Aegis uses.
    public static let standard = ScryptParameters(logN: 15, r: 8, p: 1)

    /// Creates parameters; ``problem`` says whether they are within bounds.
    public init(logN: Int, r: Int, p: Int) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// Why these parameters are refused, or `nil` when they are within bounds.
    public var problem: String? {
        guard (10...22).contains(logN) else { return "scrypt's logN is \(logN); it must be 10 to 22" }
        guard (1...32).contains(r), (1...16).contains(p) else { return "scrypt's r is \(r) and p is \(p); r must be 1 to 32 and p 1 to 16" }
        let memory = 128 * r << logN
        guard memory <= 128 << 20 else { return "scrypt would need \(memory >> 20) MiB of memory; at most 128 MiB is allowed" }
        guard (r * p) << logN <= 1 << 22 else { return "scrypt would take too long (N·r·p above 2^22)" }
        return nil
    }

    /// The 256-bit key `passphrase` derives with `salt`.
    func deriveKey(from passphrase: String, salt: Data) throws -> SymmetricKey {
        if let problem { throw KeyRingFormatError(reason: problem) }
        do {
            return try KDF.Scrypt.deriveKey(from: Data(passphrase.utf8), salt: salt, outputByteCount: 32, rounds: 1 << logN,
                                            blockSize: r, parallelism: p, maxMemory: 129 << 20)
        } catch {
            throw KeyRingFormatError(reason: "scrypt refused the parameters (logN \(logN), r \(r), p \(p))")
        }
    }
}
