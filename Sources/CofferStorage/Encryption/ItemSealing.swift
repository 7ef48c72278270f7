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

    /// The bytes to store for `value`, which will replace what `stored` returns.
    ///
    /// When the encryptor's key store has no key yet, sealing would create one. If the value
    /// stored now is sealed under a key the store no longer holds (its key file was deleted or
    /// not restored), that would lose the value and leave data under two keys: this throws
    /// ``StorageError/keyMissing(location:keyAlias:keyID:)`` instead, sealing nothing.
    func seal<T: Encodable>(
        _ value: T, identity: String, location: String, replacing stored: () async throws -> Data?
    ) async throws -> Data {
        let json = try ValueCoding.encode(value)
        guard case .sealed(let encryptor) = self else { return json }
        let bound = try IdentityBinding.wrap(json, identity: identity)
        if let keyed = encryptor as? any KeyAwareEncryptor {
            // One key lookup when there is a key (every save but the first): sealed under it.
            if let sealed = try await keyed.encryptUnderExistingKey(data: bound) { return sealed }
            if let existing = try await stored(), let missing = try await keyed.missingKey(of: existing) {
                throw StorageError.keyMissing(location: location, keyAlias: missing.alias, keyID: missing.id)
            }
        }
        return try await encryptor.encrypt(data: bound)
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

/// An encryptor whose keys live in a ``KeyStore`` it can ask: built-in ``AESGCMEncryptor`` and
/// ``SecuredKeyEncryptor``. Lets a backend tell "no key yet" from "the key is gone".
protocol KeyAwareEncryptor: Encryptor {
    /// Whether the key store holds a key that seals new data.
    func hasPrimaryKey() async throws -> Bool
    /// `data` sealed as ``Encryptor/encrypt(data:)`` seals it, but `nil` instead of making a key
    /// when the key store holds none: one key lookup where `hasPrimaryKey()` and `encrypt(data:)`
    /// would make two.
    func encryptUnderExistingKey(data: Data) async throws -> Data?
    /// The key `sealed` names when the key store does not hold it; `nil` when it does, or when
    /// `sealed` is not an envelope at all (damaged data holds no key to lose).
    func missingKey(of sealed: Data) async throws -> (alias: String, id: UInt32)?
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

    func missingKey(of sealed: Data) async throws -> (alias: String, id: UInt32)? {
        guard let id = try? Self.keyID(of: sealed) else { return nil }
        do {
            return try await keyStore.key(for: keyAlias, id: id) == nil ? (keyAlias, id) : nil
        } catch {
            throw EncryptorError.failedToEncrypt(cause: error)
        }
    }
}

extension SecuredKeyEncryptor: KeyAwareEncryptor {
    func hasPrimaryKey() async throws -> Bool { try await sealer.hasPrimaryKey() }
    func encryptUnderExistingKey(data: Data) async throws -> Data? { try await sealer.encryptUnderExistingKey(data: data) }
    func missingKey(of sealed: Data) async throws -> (alias: String, id: UInt32)? { try await sealer.missingKey(of: sealed) }
}
