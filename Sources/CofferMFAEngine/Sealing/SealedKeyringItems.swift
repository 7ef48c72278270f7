import CofferStorage
import Foundation

/// Keyring items whose values are sealed and bound to where they belong, with the keyring's
/// cross-process lock: what Ping's keychain storages (CofferOath, CofferPush) share.
///
/// Each value is sealed by a key kept in the keyring (`SecretServiceKeyStore`, alias
/// `<keyAlias>`) and bound to a field name the caller gives (`push/<service>/<id>`), so a value
/// moved onto another item's attributes does not open. Writes that must not interleave with
/// another process's read-compare-write run in ``exclusively(_:)``.
package struct SealedKeyringItems: Sendable {
    /// The keyring connection.
    package let keyring: SecretService
    private let sealer: FieldSealer
    private let lockName: String

    /// Items sealed under `keyAlias`, locked by the keyring lock `lockName`.
    package init(keyAlias: String, lockName: String, timeout: Duration) {
        keyring = SecretService(timeout: timeout)
        sealer = FieldSealer(encryptor: AESGCMEncryptor(keyAlias: keyAlias, keyStore: SecretServiceKeyStore(timeout: timeout)))
        self.lockName = lockName
    }

    /// Runs `body` holding the keyring lock (waiting without blocking a thread).
    package func exclusively<R>(_ body: () async throws -> R) async throws -> R {
        let held = try await KeyringLock.named(lockName, timeout: keyring.timeout).exclusive()
        defer { held.release() }
        return try await body()
    }

    /// `text` sealed and bound to `field`.
    package func seal(_ text: String, boundTo field: String) async throws -> Data {
        try await sealer.sealing([(text, field)])[0]
    }

    /// The text of `sealed`, which must be bound to `field`; a value bound elsewhere or damaged
    /// throws ``Misplaced``.
    package func open(_ sealed: Data, boundTo field: String) async throws -> String {
        switch await sealer.opening([(sealed, field)])[0] {
        case .success(let text): return text
        case .failure(let error):
            switch error as? StorageError {
            case .identityMismatch?, .corrupted?: throw Misplaced(field: field)
            default: throw error
            }
        }
    }

    /// The texts of several sealed values in one trip to the key store, each bound to its own
    /// field; a value bound elsewhere or damaged fails as ``Misplaced``, other failures as they came.
    package func openEach(_ values: [(sealed: Data, field: String)]) async -> [Result<String, any Error>] {
        await sealer.opening(values).enumerated().map { index, result in
            result.mapError { error in
                switch error as? StorageError {
                case .identityMismatch?, .corrupted?: Misplaced(field: values[index].field)
                default: error
                }
            }
        }
    }

    /// The one item with `attributes`, or `nil`; more than one is ``KeychainError/ambiguous(attributes:count:)``.
    package func single(_ attributes: [String: String]) async throws -> SecretService.Item? {
        let items = try await keyring.search(attributes, loadLabels: false)
        guard items.count <= 1 else { throw KeychainError.ambiguous(attributes: attributes, count: items.count) }
        return items.first
    }

    /// A sealed value that does not belong where it was found (moved from another item, or damaged).
    package struct Misplaced: Error, Sendable {
        package let field: String
    }

    /// A value that opened but does not hold what its item must (another record's, a record
    /// twice): damage the caller names, as opposed to a keyring or key store failing.
    package struct Malformed: Error, Sendable, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// Whether `error` says an item's bytes are wrong (damaged, moved, not JSON, ``Malformed``),
    /// so the item can be skipped and named, as opposed to the keyring or the key store
    /// failing (a missing key included), which must reach the caller.
    package static func isDamage(_ error: any Error) -> Bool {
        switch sealingCause(of: error) {
        case nil: return true  // the encryptor could not open it, and named no cause
        case is Misplaced?, is Malformed?, is DecodingError?: return true
        case let error as EnvelopeError:
            if case .unknownKey = error { return false }
            return true
        default: return false
        }
    }

    /// Whether `error` says a value was sealed under a key the key store does not hold (which
    /// ``isDamage(_:)`` leaves to the caller): reading it again will not change that.
    package static func isUnknownKey(_ error: any Error) -> Bool {
        if case EnvelopeError.unknownKey? = sealingCause(of: error) { return true }
        return false
    }

    /// `error` with the storage's and the encryptor's wrappers taken off; `nil` when the
    /// encryptor failed to open a value without saying why.
    private static func sealingCause(of error: any Error) -> (any Error)? {
        switch error {
        case StorageError.decryptionFailed(_, let cause): return sealingCause(of: cause)
        case EncryptorError.failedToDecrypt(let cause?): return sealingCause(of: cause)
        case EncryptorError.failedToDecrypt(nil): return nil
        default: return error
        }
    }
}
