import CofferMFAEngine
import Foundation

/// What a mechanism's sealed secret is bound to in ``SQLiteStorageClient``.
///
/// The columns that decide which code is shown under which name (issuer, account name, type,
/// algorithm, digits, period, counter) are plain so that lookups are indexed queries, so each
/// is also written into the identity the secret is sealed under (``IdentityBinding``, inside
/// the AES-GCM envelope). A column changed with `sqlite3` — Mail's issuer swapped with Bank's, a
/// HOTP counter rolled back, fewer digits — no longer matches, and the row becomes unreadable:
/// counted, reported, never used.
///
/// Rows written before this binding existed (`binding` 1) are sealed under
/// `mechanism/<uuid>/secret` alone; the client re-seals them under the full binding the first
/// time it checks the store's key and finds it right (before its first write, or when
/// `keyProblem` is asked).
package enum MechanismBinding {
    /// `mechanism/<uuid>/secret`: the UUID only.
    static let legacy = 1
    /// `mechanism/<uuid>/secret` followed by the bound columns.
    static let full = RowBinding.version

    /// The identity of `mechanism`'s secret, as it will be stored.
    package static func secretIdentity(_ mechanism: Mechanism) -> String {
        secretIdentity(uuid: mechanism.mechanismUUID, columns: [
            mechanism.issuer, mechanism.accountName, mechanism.type.rawValue, mechanism.algorithm.rawValue,
            String(mechanism.digits), String(mechanism.period), String(Int64(bitPattern: mechanism.counter)),
        ])
    }

    /// The identity the secret of a stored row must carry, from the row's own columns.
    static func secretIdentity(_ row: MechanismRow) -> String {
        guard row.binding != legacy else { return "mechanism/\(row.uuid)/secret" }
        return row.stored.secretIdentity
    }

    /// The full binding of the secret of mechanism `uuid` whose bound columns (issuer, account
    /// name, type, algorithm, digits, period, counter, as stored) are `columns`.
    package static func secretIdentity(uuid: String, columns: [String]) -> String {
        RowBinding.identity("mechanism/\(uuid)/secret", columns: columns)
    }
}
