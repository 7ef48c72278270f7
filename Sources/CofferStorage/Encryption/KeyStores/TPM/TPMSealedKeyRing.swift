import Crypto
import Foundation

/// The file a ``TPMKeyStore`` keeps for one alias: a TPM-sealed wrapping key, and the alias's
/// ``KeyRing`` sealed with AES-256-GCM under that wrapping key. A TPM seals at most 128 bytes,
/// and a ring grows with each rotation, so the TPM keeps the small key that opens the ring.
///
/// JSON, versioned. Every size is bounded before use; the ring's sealing binds it to the alias
/// and to the sealed object, so a ring moved between files or aliases does not open.
struct TPMSealedKeyRing: Codable, Equatable {
    static let formatName = "coffer.tpm-sealed-key-ring"

    var format: String
    var version: Int
    /// The storage key the object was sealed under: 0 for the one derived from the owner seed,
    /// else its persistent handle; and its TPM name.
    var parentHandle: UInt32
    var parentName: Data
    /// SHA-256 PCRs the object's policy binds it to (empty: none).
    var pcrs: [Int]
    /// Present when a PIN protects the object: the salt its auth value is derived with.
    var pinSalt: Data?
    var publicArea: Data
    var privateArea: Data
    /// The key ring, AES-256-GCM (nonce, ciphertext, tag) under the unsealed wrapping key.
    var ring: Data

    var sealedObject: TrustedPlatformModule.SealedObject {
        TrustedPlatformModule.SealedObject(
            publicArea: Array(publicArea), privateArea: Array(privateArea),
            binding: .init(parentHandle: parentHandle, parentName: Array(parentName), pcrs: pcrs, hasPIN: pinSalt != nil))
    }

    init(object: TrustedPlatformModule.SealedObject, pinSalt: Data?, ring: Data) {
        format = Self.formatName
        version = 1
        parentHandle = object.binding.parentHandle
        parentName = Data(object.binding.parentName)
        pcrs = object.binding.pcrs
        self.pinSalt = pinSalt
        publicArea = Data(object.publicArea)
        privateArea = Data(object.privateArea)
        self.ring = ring
    }

    /// Reads a file, refusing anything out of bounds before any TPM or key work.
    init(serialized data: Data) throws(KeyRingFormatError) {
        guard data.count <= 1 << 20 else { throw KeyRingFormatError(reason: "the file is larger than 1 MiB") }
        let decoded: TPMSealedKeyRing
        do {
            decoded = try JSONDecoder().decode(TPMSealedKeyRing.self, from: data)
        } catch {
            throw KeyRingFormatError(reason: "not a Coffer TPM-sealed key ring (JSON does not match the format)")
        }
        guard decoded.format == Self.formatName else { throw KeyRingFormatError(reason: "not a Coffer TPM-sealed key ring") }
        guard decoded.version == 1 else {
            throw KeyRingFormatError(reason: "TPM key ring format \(decoded.version) is not known to this version of Coffer")
        }
        guard decoded.publicArea.count <= 1024, decoded.privateArea.count <= 2048, decoded.parentName.count <= 128,
              decoded.pcrs.count <= 24, decoded.pcrs.allSatisfy({ (0..<24).contains($0) }),
              Set(decoded.pcrs).count == decoded.pcrs.count, (decoded.pinSalt?.count ?? 32) == 32
        else { throw KeyRingFormatError(reason: "a field is out of bounds") }
        self = decoded
    }

    func serialized() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Integers, strings and Data always encode.
        return try! encoder.encode(self)
    }

    /// What the ring's sealing is bound to: the format, the alias and the sealed object.
    static func authenticatedData(alias: String, object: TrustedPlatformModule.SealedObject) -> Data {
        var data = Data("\(formatName)/1\0\(alias)\0".utf8)
        data += object.publicArea
        data += object.binding.parentName
        return data
    }

    /// The TPM auth value for `pin`: SHA-256 of the salt and the PIN, so any PIN fits the
    /// TPM's 32-byte limit.
    static func authValue(pin: String, salt: Data) -> [UInt8] {
        var hash = SHA256()
        hash.update(data: salt)
        hash.update(data: Data(pin.utf8))
        return Array(hash.finalize())
    }
}
