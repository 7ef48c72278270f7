import Crypto
import Foundation
import Synchronization

/// A wrapping key that the TPM keeps sealed (``TPMKeyStore``): 32 random bytes in a sealed data
/// object, whose blobs the file's header holds. A TPM seals at most 128 bytes, and a ring grows
/// with each rotation, so the TPM keeps the small key that opens the ring.
struct TPMWrapping: KeyWrapping {
    struct Header: Codable, Equatable, Sendable {
        /// The storage key the object was sealed under: 0 for the one derived from the owner
        /// seed, else its persistent handle; and its TPM name.
        var parentHandle: UInt32
        var parentName: Data
        /// SHA-256 PCRs the object's policy binds it to (empty: none).
        var pcrs: [Int]
        /// Present when a PIN protects the object: the salt its auth value is derived with.
        var pinSalt: Data?
        var publicArea: Data
        var privateArea: Data

        var sealedObject: TrustedPlatformModule.SealedObject {
            TrustedPlatformModule.SealedObject(
                publicArea: Array(publicArea), privateArea: Array(privateArea),
                binding: .init(parentHandle: parentHandle, parentName: Array(parentName), pcrs: pcrs, hasPIN: pinSalt != nil))
        }

        init(object: TrustedPlatformModule.SealedObject, pinSalt: Data?) {
            parentHandle = object.binding.parentHandle
            parentName = Data(object.binding.parentName)
            pcrs = object.binding.pcrs
            self.pinSalt = pinSalt
            publicArea = Data(object.publicArea)
            privateArea = Data(object.privateArea)
        }
    }

    static let formatName = "coffer.tpm-sealed-key-ring"
    static let fileExtension = "tpm-key"

    let tpm: TrustedPlatformModule
    let pcrs: [Int]
    let pin: (@Sendable () async throws -> String)?
    private let refusals = Refusals()

    init(tpm: TrustedPlatformModule, pcrs: [Int], pin: (@Sendable () async throws -> String)?) {
        self.tpm = tpm
        self.pcrs = pcrs
        self.pin = pin
    }

    static func problem(with header: Header) -> String? {
        guard header.publicArea.count <= 1024, header.privateArea.count <= 2048, header.parentName.count <= 128,
              header.pcrs.count <= 24, header.pcrs.allSatisfy({ (0..<24).contains($0) }),
              Set(header.pcrs).count == header.pcrs.count, (header.pinSalt?.count ?? 32) == 32
        else { return "a field is out of bounds" }
        return nil
    }

    static func authenticatedData(_ header: Header) -> Data {
        header.publicArea + header.parentName
    }

    func newWrappingKey(alias: String) async throws -> (Header, SymmetricKey) {
        let key = SymmetricKey(size: .bits256)
        var secret = key.withUnsafeBytes { Array($0) }
        defer { secret.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        var pinSalt: Data?
        var authValue: [UInt8]?
        if let pin {
            let salt = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
            pinSalt = salt
            authValue = Self.authValue(pin: try await pin(), salt: salt)
        }
        let object = try await tpm.seal(secret, authValue: authValue, pcrs: pcrs)
        return (Header(object: object, pinSalt: pinSalt), key)
    }

    func wrappingKey(for header: Header, alias: String) async throws -> SymmetricKey {
        let object = header.sealedObject
        // A PIN the TPM refused is not offered again by this store: each try counts towards the
        // TPM's lockout, and one command may need the key several times.
        if let refused = refusals[object.publicArea] { throw refused }
        var authValue: [UInt8]?
        if let salt = header.pinSalt {
            guard let pin else { throw TPMError.pinRequired }
            do {
                authValue = Self.authValue(pin: try await pin(), salt: salt)
            } catch {
                throw refusals.remember(error, for: object.publicArea)
            }
        }
        var secret: [UInt8]
        do {
            secret = try await tpm.unseal(object, authValue: authValue)
        } catch .wrongPIN {
            throw refusals.remember(TPMError.wrongPIN, for: object.publicArea)
        } catch .lockedOut(let recovery) {
            throw refusals.remember(TPMError.lockedOut(recoverySeconds: recovery), for: object.publicArea)
        }
        defer { secret.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        guard secret.count == 32 else {
            throw KeyRingFormatError(reason: "the TPM object holds \(secret.count) bytes, not a 32-byte key")
        }
        return SymmetricKey(data: secret)
    }

    /// The TPM auth value for `pin`: SHA-256 of the salt and the PIN, so any PIN fits the
    /// TPM's 32-byte limit.
    static func authValue(pin: String, salt: Data) -> [UInt8] {
        var hash = SHA256()
        hash.update(data: salt)
        hash.update(data: Data(pin.utf8))
        return Array(hash.finalize())
    }

    /// Why the TPM or the PIN source refused an object, by its public area.
    private final class Refusals: Sendable {
        private let errors = Mutex<[[UInt8]: any Error]>([:])

        subscript(object: [UInt8]) -> (any Error)? { errors.withLock { $0[object] } }

        func remember(_ error: any Error, for object: [UInt8]) -> any Error {
            errors.withLock { $0[object] = error }
            return error
        }
    }
}
