import Foundation
import Storage

/// Seals single fields of a record (a secret, a challenge) with the client's encryptor, each
/// bound to where it belongs (`mechanism/<uuid>/secret`, …), so a sealed value copied to another
/// row or column fails to open instead of yielding another record's secret.
struct FieldSealer: Sendable {
    let encryptor: any Encryptor

    func seal(_ text: String, for field: String) throws -> Data {
        let encryptor = self.encryptor
        let bound = try IdentityBinding.wrap(Data(text.utf8), identity: field)
        return try SyncBridge.run { try await encryptor.encrypt(data: bound) }
    }

    func open(_ sealed: Data, for field: String) throws -> String {
        let encryptor = self.encryptor
        let bound: Data
        do {
            bound = try SyncBridge.run { try await encryptor.decrypt(data: sealed) }
        } catch {
            throw StorageError.decryptionFailed(location: field, cause: error)
        }
        let plain = try IdentityBinding.unwrap(bound, identity: field, location: field)
        guard let text = String(data: plain, encoding: .utf8) else {
            throw StorageError.corrupted(location: field, reason: "the opened field is not UTF-8 text")
        }
        return text
    }
}
