import CofferPostgres
import CofferMFAEngine
import CofferAuthenticator
import Foundation

/// What the sealed fields of ``PostgresStorageClient`` are bound to: the owner first, then the
/// same binding as the SQLite client's (``MechanismBinding``): the mechanism's UUID and the
/// columns that decide which code is shown under which name.
///
/// A row moved to another owner (`UPDATE coffer_mechanisms SET owner = …`), copied onto another
/// row, or with its issuer, type or counter changed no longer opens: it is counted as
/// unreadable and never used.
enum OwnerBinding {
    /// `["<owner>"]/`: JSON, so no owner name can end early or run into the rest.
    static func scope(_ owner: String) -> String {
        RowBinding.jsonArray([owner]) + "/"
    }

    /// The identity of a mechanism's secret.
    static func secret(_ owner: String, _ mechanism: Mechanism) -> String {
        scope(owner) + MechanismBinding.secretIdentity(mechanism)
    }

    /// The identity a stored row's secret must carry, from the row's own columns.
    static func secret(_ owner: String, _ row: StoredMechanism) -> String {
        scope(owner) + row.secretIdentity
    }

    /// The identity of a push mechanism's registration challenge.
    static func challenge(_ owner: String, mechanism uuid: String) -> String {
        scope(owner) + "mechanism/\(uuid)/challenge"
    }

    /// The identity of a notification's challenge.
    static func challenge(_ owner: String, mechanism uuid: String, messageId: String) -> String {
        scope(owner) + "notification/\(uuid)/\(messageId)/challenge"
    }
}
