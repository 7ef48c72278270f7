import Foundation

/// Why a storage client refused one of the operations Coffer adds beyond the spec's
/// ``StorageClient`` protocol (``StorageClient/insertMechanism(_:)``,
/// ``StorageClient/advanceCounter(mechanismUUID:)``) or a write that would have replaced or
/// cascaded over another object.
public enum StorageClientError: Error, Sendable {
    /// Another object (another account or type) is stored under this mechanism UUID. Nothing was
    /// written.
    case uuidTaken(uuid: String)
    /// The account already has a mechanism of this type, readable or not. Nothing was written.
    case mechanismExists(issuer: String, accountName: String, type: MechanismType)
    /// No mechanism with this UUID is stored.
    case mechanismNotFound(uuid: String)
    /// No account with this identifier (``Account/identifier``) is stored.
    case accountNotFound(identifier: String)
    /// An update tried to change the account's identity (its issuer or account name), which
    /// would make it another account; nothing was written. Change the display names instead.
    case identityChanged(identifier: String)
    /// The HOTP counter is at the largest value it can hold; it cannot move on.
    case counterExhausted(uuid: String)
    /// The object still owns records (mechanisms, notifications), some perhaps unreadable;
    /// removing it would delete them with it, so nothing was removed.
    case stillOwnsRecords(what: String, count: Int)
    /// The store's records are sealed with a key that cannot be used now (missing, or another
    /// key): nothing new is sealed until it is restored, so the store never ends up under two
    /// keys. `cause` says why.
    case keyUnavailable(cause: any Error)
    /// A spec-only client answered `false`; `cause` is its `lastError` when it keeps one.
    case failed(operation: String, cause: (any Error)?)
}

extension StorageClientError: LocalizedError {
    /// What went wrong and what to do, naming the account, the mechanism id or the operation,
    /// and saying when nothing was written; never a secret.
    public var errorDescription: String? {
        switch self {
        case .uuidTaken(let uuid):
            return "Another account or mechanism type is already stored under the mechanism id \(uuid); nothing was written."
        case let .mechanismExists(issuer, accountName, type):
            return "\(issuer): \(accountName) already has a \(type.rawValue.uppercased()) mechanism; nothing was written."
        case .mechanismNotFound(let uuid): return "No mechanism with the id \(uuid) is stored."
        case .accountNotFound(let identifier):
            return "No account \(IdentifierCoding.split(identifier).joined(separator: ": ")) is stored."
        case .identityChanged(let identifier):
            return "An update would change the issuer or account name of \(IdentifierCoding.split(identifier).joined(separator: ": ")), "
                + "which identify it; nothing was written. Change its display names instead."
        case .counterExhausted(let uuid):
            return "The HOTP counter of mechanism \(uuid) is at its largest value and cannot move on; enrol the account again."
        case let .stillOwnsRecords(what, count):
            return "\(what) still owns \(count) record(s), perhaps unreadable ones; nothing was removed, so they are not deleted with it."
        case .keyUnavailable(let cause):
            let detail = (cause as? LocalizedError)?.errorDescription ?? "\(cause)"
            return "The store's key cannot be used, so nothing new is sealed (that would leave the store under two keys): \(detail)"
        case let .failed(operation, cause):
            let detail = cause.map { ($0 as? LocalizedError)?.errorDescription ?? "\($0)" } ?? "the storage client returned false"
            return "Could not \(operation): \(detail)"
        }
    }
}
