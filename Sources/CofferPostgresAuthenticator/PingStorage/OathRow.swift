import CofferPostgres
import CofferOath
import Foundation
import PostgresNIO

/// A row of `coffer_oath_credentials`: the credential without its secret, and the sealed secret.
struct OathRow: Sendable {
    let credential: OathCredential
    let sealed: Data
    /// The counter as stored, for the compare-and-swap.
    let counter: Int64

    static let names = ["id", "user_id", "resource_id", "issuer", "display_issuer", "account_name", "display_account_name", "type",
                        "secret", "algorithm", "digits", "period", "counter", "created_at", "image_url", "background_color", "policies",
                        "locking_policy", "is_locked"]
    static let select = "SELECT \(names.joined(separator: ", ")) FROM coffer_oath_credentials "

    /// A row selected with ``select``; a column of the wrong type or value is
    /// `OathStorageError.storageCorrupted(_:)` naming the column, never the value.
    init(_ row: PostgresRow) throws {
        var cursor = ColumnCursor(row, record: row.recordName("OATH credential", owner: "its owner"), columns: Self.names)
        do {
            let id: String = try cursor.next()
            let userId: String? = try cursor.next(), resourceId: String? = try cursor.next()
            let issuer: String = try cursor.next(), displayIssuer: String = try cursor.next()
            let accountName: String = try cursor.next(), displayAccountName: String = try cursor.next()
            let typeName: String = try cursor.next()
            sealed = try cursor.next()
            let algorithmName: String = try cursor.next()
            let digits: Int = try cursor.next(), period: Int = try cursor.next()
            counter = try cursor.next()
            let created: Double = try cursor.next()
            guard let type = OathType(rawValue: typeName.lowercased()), let algorithm = OathAlgorithm(rawValue: algorithmName),
                  let counterValue = Int(exactly: counter) else {
                throw OathStorageError.storageCorrupted("the row of \(id) has a type, algorithm or counter Coffer does not know")
            }
            credential = OathCredential(
                id: id, userId: userId, resourceId: resourceId, issuer: issuer, displayIssuer: displayIssuer, accountName: accountName,
                displayAccountName: displayAccountName, oathType: type, oathAlgorithm: algorithm, digits: digits, period: period,
                counter: counterValue, createdAt: Date(timeIntervalSinceReferenceDate: created), imageURL: try cursor.next(),
                backgroundColor: try cursor.next(), policies: try cursor.next(), lockingPolicy: try cursor.next(),
                isLocked: try cursor.next(), secretKey: "")
        } catch let error as OathStorageError {
            throw error
        } catch {
            throw OathStorageError.storageCorrupted("\(error)")
        }
    }

    /// Stores `credential` with its sealed secret, replacing the owner's row with the same id.
    static func upsert(_ credential: OathCredential, sealed: Data, owner: String) throws -> PostgresQuery {
        try """
        INSERT INTO coffer_oath_credentials (owner, id, user_id, resource_id, issuer, display_issuer, account_name,
            display_account_name, type, secret, algorithm, digits, period, counter, created_at, image_url, background_color,
            policies, locking_policy, is_locked)
        VALUES (\(owner), \(credential.id), \(credential.userId), \(credential.resourceId), \(credential.issuer),
            \(credential.displayIssuer), \(credential.accountName), \(credential.displayAccountName),
            \(credential.oathType.rawValue.uppercased()), \(sealed), \(credential.algorithm), \(credential.digits),
            \(credential.period), \(Int64(credential.counter)), \(credential.createdAt.timeIntervalSinceReferenceDate),
            \(credential.imageURL), \(credential.backgroundColor), \(credential.policies), \(credential.lockingPolicy),
            \(credential.isLocked))
        ON CONFLICT (owner, id) DO UPDATE SET user_id = excluded.user_id, resource_id = excluded.resource_id,
            issuer = excluded.issuer, display_issuer = excluded.display_issuer, account_name = excluded.account_name,
            display_account_name = excluded.display_account_name, type = excluded.type, secret = excluded.secret,
            algorithm = excluded.algorithm, digits = excluded.digits, period = excluded.period, counter = excluded.counter,
            created_at = excluded.created_at, image_url = excluded.image_url, background_color = excluded.background_color,
            policies = excluded.policies, locking_policy = excluded.locking_policy, is_locked = excluded.is_locked
        """
    }

    /// Stores `credential` over the owner's row only if the row still has `counter` and the
    /// sealed `secret` it was read with; returns the stored counter (no row when it changed).
    static func update(_ credential: OathCredential, sealed: Data, owner: String, ifCounter counter: Int64, secret: Data) throws -> PostgresQuery {
        try """
        UPDATE coffer_oath_credentials SET user_id = \(credential.userId), resource_id = \(credential.resourceId),
            issuer = \(credential.issuer), display_issuer = \(credential.displayIssuer), account_name = \(credential.accountName),
            display_account_name = \(credential.displayAccountName), type = \(credential.oathType.rawValue.uppercased()),
            secret = \(sealed), algorithm = \(credential.algorithm), digits = \(credential.digits), period = \(credential.period),
            counter = \(Int64(credential.counter)), created_at = \(credential.createdAt.timeIntervalSinceReferenceDate),
            image_url = \(credential.imageURL), background_color = \(credential.backgroundColor), policies = \(credential.policies),
            locking_policy = \(credential.lockingPolicy), is_locked = \(credential.isLocked)
        WHERE owner = \(owner) AND id = \(credential.id) AND counter = \(counter) AND secret = \(secret)
        RETURNING counter
        """
    }
}
