import Crypto
import Foundation
import Synchronization

/// Seals data with AES-256-GCM under a key from a ``KeyStore``, in a ``SealedEnvelope``.
///
/// Sealing uses the alias's primary key (creating the alias's first key when it has none) and a
/// fresh random 96-bit nonce. Opening reads the key id from the envelope, so data sealed before a
/// ``rotateKey()`` still opens, and fails with ``EncryptorError/failedToDecrypt(cause:)`` when
/// the envelope was altered in any byte or sealed with another key. It never returns
/// unauthenticated bytes.
///
/// ```swift
/// let encryptor = AESGCMEncryptor(keyAlias: "com.example.v1.KEYS", keyStore: MemoryKeyStore())
/// let sealed = try await encryptor.encrypt(data: Data("secret".utf8))
/// let opened = try await encryptor.decrypt(data: sealed)
/// ```
public struct AESGCMEncryptor: Encryptor {
    /// The alias whose keys this encryptor uses.
    public let keyAlias: String
    /// Where the keys live.
    public let keyStore: any KeyStore
    /// Keys already fetched, by id. A key id never changes meaning (rotation adds new ids), so
    /// opening many envelopes reads each key from the store once.
    private let openingKeys = KeyCache()
    /// Whether sealing makes the alias's first key when it has none (see
    /// ``sealingOnlyUnderExistingKeys()``).
    private var createsKey = true

    /// Creates an encryptor that uses the keys of `keyAlias` in `keyStore`.
    public init(keyAlias: String, keyStore: any KeyStore) {
        self.keyAlias = keyAlias
        self.keyStore = keyStore
    }

    /// This encryptor, except that it never makes a key: with none in the key store, sealing
    /// fails with ``EnvelopeError/noKeyToSealWith(alias:)``. For a store that already holds data
    /// sealed under a key: a key that went missing (moved away by another process) must not be
    /// replaced by a new one, which would leave the store under two keys.
    package func sealingOnlyUnderExistingKeys() -> AESGCMEncryptor {
        var copy = self
        copy.createsKey = false
        return copy
    }

    public func encrypt(data: Data) async throws -> Data {
        if let sealed = try await encryptUnderExistingKey(data: data) { return sealed }
        let key: VersionedKey
        do {
            guard createsKey else { throw EnvelopeError.noKeyToSealWith(alias: keyAlias) }
            key = try await keyStore.createKey(for: keyAlias)
        } catch {
            throw EncryptorError.failedToEncrypt(cause: error)
        }
        return try Self.seal(data, with: key)
    }

    /// `data` in an envelope sealed under `key`, with a fresh random nonce.
    static func seal(_ data: Data, with key: VersionedKey) throws(EncryptorError) -> Data {
        do {
            let header = SealedEnvelope.header(keyID: key.id)
            let box = try AES.GCM.seal(data, using: key.key, nonce: AES.GCM.Nonce(), authenticating: header)
            // AES-GCM's combined form (nonce, ciphertext, tag) is the envelope's body, after the
            // header it authenticated; a 96-bit nonce, as here, always has one.
            let body = box.combined ?? Data(box.nonce) + box.ciphertext + box.tag
            return SealedEnvelope.serialized(header: header, body: body)
        } catch {
            throw .failedToEncrypt(cause: error)
        }
    }

    public func decrypt(data: Data) async throws -> Data {
        let key: VersionedKey
        do {
            let keyID = try SealedEnvelope.keyID(checking: data)
            if let cached = openingKeys[keyID] {
                key = cached
            } else {
                guard let found = try await keyStore.key(for: keyAlias, id: keyID) else {
                    throw EnvelopeError.unknownKey(alias: keyAlias, keyID: keyID)
                }
                openingKeys[keyID] = found
                key = found
            }
        } catch {
            throw EncryptorError.failedToDecrypt(cause: error)
        }
        return try Self.open(data, with: key)
    }

    /// `data` opened as ``decrypt(data:)`` opens it, without suspending, when the key it names
    /// was fetched before (by `decrypt`); `nil` when the key store would have to be asked. For a
    /// synchronous caller, which otherwise pays a thread switch for every batch it opens.
    package func decryptUnderKnownKey(data: Data) throws(EncryptorError) -> Data? {
        let key: VersionedKey
        do {
            guard let known = openingKeys[try SealedEnvelope.keyID(checking: data)] else { return nil }
            key = known
        } catch {
            throw .failedToDecrypt(cause: error)
        }
        return try Self.open(data, with: key)
    }

    /// `data`, an envelope, opened under `key`.
    private static func open(_ data: Data, with key: VersionedKey) throws(EncryptorError) -> Data {
        do {
            // After the header the envelope is AES-GCM's own combined form (nonce, ciphertext,
            // tag), and the header as stored is the associated data: opened where it lies.
            // (Sliced by index: Data's generic `prefix` and `dropFirst` cost more than the open's
            // own bookkeeping.)
            let body = data.startIndex + SealedEnvelope.headerSize
            guard body <= data.endIndex else { throw EnvelopeError.truncated(length: data.count) }
            let box = try AES.GCM.SealedBox(combined: data[body...])
            return try AES.GCM.open(box, using: key.key, authenticating: data[..<body])
        } catch {
            throw .failedToDecrypt(cause: EnvelopeError.authenticationFailed)
        }
    }

    /// Makes a new primary key for ``keyAlias`` and returns its id. Existing data still opens;
    /// the next seal uses the new key.
    @discardableResult
    public func rotateKey() async throws -> UInt32 {
        try await keyStore.rotateKey(for: keyAlias).id
    }

    /// The id of the key that sealed `data`, read from its envelope header (not authenticated).
    public static func keyID(of data: Data) throws(EnvelopeError) -> UInt32 {
        try SealedEnvelope(parsing: data).keyID
    }
}

/// Keys by id, shared by copies of one encryptor.
private final class KeyCache: Sendable {
    private let keys = Mutex<[UInt32: VersionedKey]>([:])

    subscript(id: UInt32) -> VersionedKey? {
        get { keys.withLock { $0[id] } }
        set { keys.withLock { $0[id] = newValue } }
    }
}
