import Foundation

/// How a backend turns a value into the bytes it stores, and back: JSON, then (when sealed)
/// bound to the item's identity and encrypted.
enum ItemSealing: Sendable {
    /// Plain JSON.
    case plain
    /// JSON bound to the item's identity (``IdentityBinding``) and sealed by the encryptor.
    case sealed(any Encryptor)

    /// `.plain` for ``NoEncryptor`` (which would add nothing), `.sealed` for any other encryptor.
    init(_ encryptor: any Encryptor) {
        self = encryptor is NoEncryptor ? .plain : .sealed(encryptor)
    }

    /// The bytes to store for `value`.
    ///
    /// When the encryptor's key store has no key for its alias, sealing would make one. If a value
    /// is stored sealed under the alias (`sealedUnder` finds it: the value being replaced, or
    /// another one the backend knows), its key went missing (a key file deleted or not
    /// restored), and a new key would strand it and leave data under two keys: this throws
    /// ``StorageError/keyMissing(location:keyAlias:keyID:)`` instead, sealing nothing.
    ///
    /// A key is made only after a look that found no key and no such value. The key store is
    /// looked at again once such a value is found (another writer may have just made the first
    /// key, which is then used), but never a key made then: a key file moved away and back
    /// during one save cannot end in a second key.
    func seal<T: Encodable>(
        _ value: T, identity: String, sealedUnder: (_ keyAlias: String) async throws -> SealedValue?
    ) async throws -> Data {
        let json = try ValueCoding.encode(value)
        guard case .sealed(let encryptor) = self else { return json }
        let bound = try IdentityBinding.wrap(json, identity: identity)
        if let keyed = encryptor as? any KeyAwareEncryptor {
            // One key lookup when there is a key (every save but the first): sealed under it.
            if let sealed = try await keyed.encryptUnderExistingKey(data: bound) { return sealed }
            if let stranded = try await sealedUnder(keyed.keyAlias) {
                if let sealed = try await keyed.encryptUnderExistingKey(data: bound) { return sealed }
                throw StorageError.keyMissing(location: stranded.location, keyAlias: keyed.keyAlias, keyID: stranded.keyID)
            }
        }
        return try await encryptor.encrypt(data: bound)
    }

    /// The bytes to store for `value` when no key has to be made for them: plain JSON, sealed
    /// by an encryptor whose keys cannot be looked at, or sealed under the existing key; `nil`
    /// when the key store has no key yet (then ``seal(_:identity:sealedUnder:)`` decides).
    func sealUnderExistingKey<T: Encodable>(_ value: T, identity: String) async throws -> Data? {
        let json = try ValueCoding.encode(value)
        guard case .sealed(let encryptor) = self else { return json }
        let bound = try IdentityBinding.wrap(json, identity: identity)
        guard let keyed = encryptor as? any KeyAwareEncryptor else { return try await encryptor.encrypt(data: bound) }
        return try await keyed.encryptUnderExistingKey(data: bound)
    }

    /// The value stored in `data`, checked against `identity`. `location` names the item in
    /// errors.
    ///
    /// Data written with the other kind of encryptor (sealed and read plain, or the reverse) is
    /// ``StorageError/encryptorChanged(location:writtenSealed:)``, not damage.
    func open<T: Decodable>(_ data: Data, as type: T.Type, identity: String, location: String) async throws -> T {
        var json = data
        if case .sealed(let encryptor) = self {
            do {
                json = try await encryptor.decrypt(data: data)
            } catch {
                // Plain JSON of this very type, as a storage without an encryptor writes it.
                if !Self.looksSealed(data), (try? ValueCoding.decode(T.self, from: data, location: location)) != nil {
                    throw StorageError.encryptorChanged(location: location, writtenSealed: false)
                }
                throw StorageError.decryptionFailed(location: location, cause: error)
            }
            json = try IdentityBinding.unwrap(json, identity: identity, location: location)
        } else if Self.looksSealed(data) {
            throw StorageError.encryptorChanged(location: location, writtenSealed: true)
        }
        return try ValueCoding.decode(T.self, from: json, location: location)
    }

    /// Whether `data` begins as a Coffer envelope does (JSON never begins with its magic).
    static func looksSealed(_ data: Data) -> Bool {
        data.count >= SealedEnvelope.headerSize && data.prefix(SealedEnvelope.magic.count).elementsEqual(SealedEnvelope.magic)
    }
}

/// A stored value sealed in an envelope, and the key id its header names: what a first key made
/// for its alias would strand.
struct SealedValue: Sendable, Equatable {
    /// Where it is, as errors name it.
    var location: String
    /// The key that sealed it.
    var keyID: UInt32

    /// `data` (an envelope, or its first ``SealedEnvelope/minimumSize`` bytes) as a sealed value
    /// at `location`; `nil` when there is no data or it is not an envelope (damaged data holds no
    /// key to lose).
    init?(_ data: Data?, at location: String) {
        guard let data, let id = try? SealedEnvelope.keyID(checking: data) else { return nil }
        self.location = location
        self.keyID = id
    }
}

/// An encryptor whose keys live in a ``KeyStore`` it can ask: built-in ``AESGCMEncryptor`` and
/// ``SecuredKeyEncryptor``. Lets a backend tell "no key yet" from "the key is gone".
protocol KeyAwareEncryptor: Encryptor {
    /// Whether the key store holds a key that seals new data.
    func hasPrimaryKey() async throws -> Bool
    /// `data` sealed as ``Encryptor/encrypt(data:)`` seals it, but `nil` instead of making a key
    /// when the key store holds none: one key lookup where `hasPrimaryKey()` and `encrypt(data:)`
    /// would make two.
    func encryptUnderExistingKey(data: Data) async throws -> Data?
    /// The alias whose keys seal.
    var keyAlias: String { get }
}

extension AESGCMEncryptor: KeyAwareEncryptor {
    // A key store that cannot answer fails these as it would fail `encrypt`.
    func hasPrimaryKey() async throws -> Bool {
        do {
            return try await keyStore.primaryKey(for: keyAlias) != nil
        } catch {
            throw EncryptorError.failedToEncrypt(cause: error)
        }
    }

    func encryptUnderExistingKey(data: Data) async throws -> Data? {
        let primary: VersionedKey?
        do {
            primary = try await keyStore.primaryKey(for: keyAlias)
        } catch {
            throw EncryptorError.failedToEncrypt(cause: error)
        }
        return try primary.map { try Self.seal(data, with: $0) }
    }
}

extension SecuredKeyEncryptor: KeyAwareEncryptor {
    func hasPrimaryKey() async throws -> Bool { try await sealer.hasPrimaryKey() }
    func encryptUnderExistingKey(data: Data) async throws -> Data? { try await sealer.encryptUnderExistingKey(data: data) }
}
