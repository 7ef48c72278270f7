import CofferStorage
import Crypto
import Foundation

/// The key that wraps the data keys kept in the database (`coffer_keys`).
///
/// Every instance reads it from a 0600 file or from the OS keyring; it never enters the
/// database, so a copy of the database (a backup, a replica, a stolen dump) opens nothing
/// without it. Its ``fingerprint`` is stored beside each wrapped key, so a wrong key-encryption
/// key is named as such rather than reported as damage.
public struct KeyEncryptionKey: Sendable {
    let key: SymmetricKey
    /// Derived from `key`: the key of change notifications' tags (``changeTag(_:)``).
    private let tagKey: SymmetricKey

    /// A short, non-secret name for the key: 16 hex digits of SHA-256("coffer-kek" ‖ key).
    public let fingerprint: String

    /// A key-encryption key from 256 bits of key material.
    public init(_ key: SymmetricKey) throws(PostgresStorageError) {
        guard key.bitCount == 256 else { throw .invalidConfiguration("a key-encryption key must be 256 bits, not \(key.bitCount)") }
        self.key = key
        tagKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data("coffer-change-tags".utf8), outputByteCount: 32)
        let digest = key.withUnsafeBytes { SHA256.hash(data: Data("coffer-kek".utf8) + Data($0)) }
        fingerprint = digest.prefix(8).hexString
    }

    /// A new random key-encryption key.
    public static func random() -> KeyEncryptionKey {
        // 256 bits, so init cannot throw.
        try! KeyEncryptionKey(SymmetricKey(size: .bits256))
    }

    /// The key in the file at `path`: one line of base64 (32 bytes). The file must be yours and
    /// readable by you alone (0600), as every key file Coffer uses.
    public static func load(fromFile path: String) throws -> KeyEncryptionKey {
        guard let data = try PrivateFile.read(path) else {
            throw PostgresStorageError.invalidConfiguration("there is no key-encryption key at \(path); make one with `coffer key new-kek \(path)` "
                + "(once, then give the same file to every instance)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: text), bytes.count == 32 else {
            throw PostgresStorageError.invalidConfiguration("\(path) does not hold a key-encryption key (one line of base64, 32 bytes)")
        }
        return try KeyEncryptionKey(SymmetricKey(data: bytes))
    }

    /// Makes a new key-encryption key and writes it to `path`, 0600 from the first byte;
    /// refuses when a file is there already (a key is never replaced).
    @discardableResult
    public static func create(atFile path: String) throws -> KeyEncryptionKey {
        let kek = random()
        let line = kek.key.withUnsafeBytes { Data($0).base64EncodedString() } + "\n"
        try PrivateFile.create(Data(line.utf8), at: path)
        return kek
    }

    /// The key-encryption key in the systemd credential `name`: the file `$CREDENTIALS_DIRECTORY/name`
    /// that systemd decrypts for the service (`LoadCredentialEncrypted=name:…` in the unit, made
    /// with `systemd-creds encrypt`), so the key is on disk only encrypted (by the TPM, the host
    /// key or both) and in the clear only in the service's own memory-backed credentials folder.
    public static func fromCredential(named name: String) throws -> KeyEncryptionKey {
        guard let folder = ProcessEnvironment.value("CREDENTIALS_DIRECTORY"), folder.hasPrefix("/") else {
            throw PostgresStorageError.invalidConfiguration("CREDENTIALS_DIRECTORY is not set: the credential '\(name)' is given to a "
                + "systemd service by LoadCredentialEncrypted=\(name):… in its unit; outside such a service use a key file")
        }
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw PostgresStorageError.invalidConfiguration("'\(name)' is not a credential name")
        }
        return try load(fromFile: folder + "/" + name)
    }

    /// The key-encryption key sealed by this machine's TPM in `file` (`<name>.tpm-key`, made by
    /// ``sealToTPM(file:tpm:)`` or `coffer key new-kek --tpm`): a copy of the file, the disk or a
    /// backup opens on no other machine.
    public static func fromTPM(file path: String, tpm: TrustedPlatformModule = .fromEnvironment()) async throws -> KeyEncryptionKey {
        let (store, alias) = try tpmStore(path, tpm: tpm)
        guard let key = try await store.primaryKey(for: alias) else {
            throw PostgresStorageError.invalidConfiguration("there is no TPM-sealed key-encryption key at \(path); make one with "
                + "`coffer key new-kek --tpm \(path)` (or seal the shared one there with --from)")
        }
        return try KeyEncryptionKey(key.key)
    }

    /// Seals this key with this machine's TPM into `file` (which must end in `.tpm-key`, and not
    /// exist yet): each instance sealing the same key with its own TPM shares the database
    /// without the key in the clear on any disk.
    public func sealToTPM(file path: String, tpm: TrustedPlatformModule = .fromEnvironment()) async throws {
        let (store, alias) = try Self.tpmStore(path, tpm: tpm)
        let material = key.withUnsafeBytes { Data($0).base64EncodedString() }
        let ring = try KeyRing(serialized: Data(#"{"format":1,"primary":1,"keys":[{"id":1,"material":"\#(material)"}]}"#.utf8))
        try await store.insertKeyRing(ring, for: alias)
    }

    private static func tpmStore(_ path: String, tpm: TrustedPlatformModule) throws -> (TPMKeyStore, String) {
        let url = URL(fileURLWithPath: path)
        guard url.pathExtension == "tpm-key", !url.deletingPathExtension().lastPathComponent.isEmpty else {
            throw PostgresStorageError.invalidConfiguration("a TPM-sealed key-encryption key's file name ends in .tpm-key; \(path) does not")
        }
        let alias = url.deletingPathExtension().lastPathComponent
        let store = TPMKeyStore(directory: url.deletingLastPathComponent(), tpm: tpm)
        guard try store.fileURL(for: alias).path == url.standardizedFileURL.path else {
            throw PostgresStorageError.invalidConfiguration("\(path): use letters, digits, '-', '_' and '.' in the name of a TPM-sealed key file")
        }
        return (store, alias)
    }

    /// The key-encryption key kept in the OS keyring under `alias`, made there the first time.
    public static func fromKeyring(alias: String = "org.coffer.postgres.kek") async throws -> KeyEncryptionKey {
        try KeyEncryptionKey(try await SecretServiceKeyStore().createKey(for: alias).key)
    }

    /// Wraps a data key of the key ring `alias` of `ringOwner` (`""` for the shared ring), key
    /// `id`: AES-256-GCM, bound to the ring, the id and this key's fingerprint.
    func wrap(_ dataKey: SymmetricKey, ringOwner: String, alias: String, id: UInt32) throws -> Data {
        let context = Self.context(ringOwner: ringOwner, alias: alias, id: id, fingerprint: fingerprint)
        let sealed = try dataKey.withUnsafeBytes { try AES.GCM.seal(Data($0), using: key, authenticating: context) }
        guard let combined = sealed.combined else { throw PostgresStorageError.invalidConfiguration("AES-GCM gave no combined form") }
        return combined
    }

    /// Unwraps what ``wrap(_:ringOwner:alias:id:)`` made.
    func unwrap(_ wrapped: Data, ringOwner: String, alias: String, id: UInt32) throws -> SymmetricKey {
        let box = try AES.GCM.SealedBox(combined: wrapped)
        let context = Self.context(ringOwner: ringOwner, alias: alias, id: id, fingerprint: fingerprint)
        return SymmetricKey(data: try AES.GCM.open(box, using: key, authenticating: context))
    }

    private static func context(ringOwner: String, alias: String, id: UInt32, fingerprint: String) -> Data {
        // JSON: unambiguous whatever the alias holds. The shared ring's context is the one keys
        // were wrapped under before owners had rings of their own; an owner's names the owner, so
        // a wrapped key copied into another owner's ring does not open.
        let parts = ["coffer-postgres-key", alias, String(id), fingerprint] + (ringOwner.isEmpty ? [] : ["owner", ringOwner])
        return (try? JSONEncoder().encode(parts)) ?? Data()
    }

    /// The tag a change notification carries for `parts` (what changed): 128 bits of
    /// HMAC-SHA256 under a key derived from this key, in hex. Instances holding this key find
    /// the changes that concern them; a listener without it learns only that something changed.
    func changeTag(_ parts: [String]) -> String {
        let message = (try? JSONEncoder().encode(parts)) ?? Data()
        return HMAC<SHA256>.authenticationCode(for: message, using: tagKey).prefix(16).hexString
    }
}
