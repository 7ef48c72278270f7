import CofferMFAEngine
import CofferStorage
import Foundation
import GRDB

/// An account's ``AccountDetails`` in the `account.details` column: JSON sealed with the store's
/// key and bound to the account (`account/<identifier>/details`), so a note copied to another
/// account's row fails to open instead of showing there.
extension SQLiteStorageClient {
    static func detailsField(_ account: Account) -> String { "account/\(account.identifier)/details" }

    /// Each account's sealed details (`nil` for an account without), sealed in one trip.
    func sealedDetails(_ accounts: [Account]) throws -> [Data?] {
        let with = accounts.compactMap { account in account.details.map { (account, $0) } }
        guard !with.isEmpty else { return accounts.map { _ in nil } }
        try requireKey()
        let texts = try with.map { account, details in
            (String(decoding: try JSONEncoder().encode(details), as: UTF8.self), Self.detailsField(account))
        }
        var sealed = try sealer.seal(texts)[...]
        return accounts.map { $0.details == nil ? nil : sealed.removeFirst() }
    }

    /// The accounts of `rows` (selected with ``AccountRow/select``) with their details opened,
    /// in one trip for all of them; a row whose columns or details cannot be read is left out
    /// and counted unreadable under `operation`.
    func accounts(_ rows: [Row], operation: String) -> [Account] {
        let decoded = rows.map { row in
            (row, readable(operation, row.recordName("account", key: "issuer")) { try Account(row, store: path) })
        }
        let sealed = decoded.compactMap { row, account -> (sealed: Data, field: String)? in
            guard let account, let blob: Data = row[AccountRow.detailsColumn] else { return nil }
            return (blob, Self.detailsField(account))
        }
        var opened = sealed.isEmpty ? [][...] : sealer.open(sealed)[...]
        return decoded.compactMap { row, account -> Account? in
            guard var account else { return nil }
            guard (row[AccountRow.detailsColumn] as Data?) != nil else { return account }
            let result = opened.removeFirst()
            return readable(operation, row.recordName("account", key: "issuer")) {
                account.details = try JSONDecoder().decode(AccountDetails.self, from: Data(try result.get().utf8))
                return account
            }
        }
    }
}
