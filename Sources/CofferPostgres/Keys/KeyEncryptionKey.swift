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

    /// A short, non-secret name for the key: 16 hex digits of SHA-256("coffer-kek" ‖ key).
    public let fingerprint: String

    /// A key-encryption key from 256 bits of key material.
    public init(_ key: SymmetricKey) throws(PostgresStorageError) {
        guard key.bitCount == 256 else { throw .invalidConfiguration("a key-encryption key must be 256 bits, not \(key.bitCount)") }
        self.key = key
        let digest = key.withUnsafeBytes { SHA256.hash(data: Data("coffer-kek".utf8) + Data($0)) }
        fingerprint = digest.prefix(8).map { String(format: "%02x", $0) }.joined()
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

    /// The key-encryption key kept in the OS keyring under `alias`, made there the first time.
    public static func fromKeyring(alias: String = "org.coffer.postgres.kek") async throws -> KeyEncryptionKey {
        try KeyEncryptionKey(try await SecretServiceKeyStore().createKey(for: alias).key)
    }

    /// Wraps a data key for `alias`, key `id`: AES-256-GCM, bound to the alias, id and this
    /// key's fingerprint.
    func wrap(_ dataKey: SymmetricKey, alias: String, id: UInt32) throws -> Data {
        let sealed = try dataKey.withUnsafeBytes {
            try AES.GCM.seal(Data($0), using: key, authenticating: Self.context(alias: alias, id: id, fingerprint: fingerprint))
        }
        guard let combined = sealed.combined else { throw PostgresStorageError.invalidConfiguration("AES-GCM gave no combined form") }
        return combined
    }

    /// Unwraps what ``wrap(_:alias:id:)`` made.
    func unwrap(_ wrapped: Data, alias: String, id: UInt32) throws -> SymmetricKey {
        let box = try AES.GCM.SealedBox(combined: wrapped)
        return SymmetricKey(data: try AES.GCM.open(box, using: key, authenticating: Self.context(alias: alias, id: id, fingerprint: fingerprint)))
    }

    private static func context(alias: String, id: UInt32, fingerprint: String) -> Data {
        // JSON: unambiguous whatever the alias holds.
        (try? JSONEncoder().encode(["coffer-postgres-key", alias, String(id), fingerprint])) ?? Data()
    }
}
