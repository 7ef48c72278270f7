import CofferPostgres
import CofferMFAEngine
import CofferAuthenticator
import Foundation
import PostgresNIO

/// An account's `AccountDetails` in `coffer_accounts.details`: JSON sealed under the owner's key
/// ring and bound to the owner and the account, so a note copied to another row or owner fails
/// to open instead of showing there.
extension PostgresStorageClient {
    static func detailsField(_ owner: String, issuer: String, accountName: String) -> String {
        OwnerBinding.scope(owner) + "account/\(Account.identifier(issuer: issuer, accountName: accountName))/details"
    }

    /// Each account's sealed details (`nil` for an account without), one key lookup for all.
    func sealedDetails(_ accounts: [Account]) async throws -> [Data?] {
        let owner = self.owner
        let with = try accounts.compactMap { account in
            try account.details.map { (String(decoding: try JSONEncoder().encode($0), as: UTF8.self),
                                       Self.detailsField(owner, issuer: account.issuer, accountName: account.accountName)) }
        }
        guard !with.isEmpty else { return accounts.map { _ in nil } }
        var sealed = try await sealing(with)[...]
        return accounts.map { $0.details == nil ? nil : sealed.removeFirst() }
    }

    /// The accounts of `rows` (selected with ``AccountColumns/select``) with their details
    /// opened; a row whose columns or details cannot be read is counted unreadable and left out.
    func accounts(_ rows: [PostgresRow], _ operation: String) async throws -> [Account] {
        let owner = self.owner
        let decoded = rows.map { row in
            (row, diagnostics.readable(operation, row.recordName("account", owner: owner)) { try Account(row, owner: owner) },
             try? row.makeRandomAccess()[AccountColumns.names.count].decode(Data?.self))
        }
        let fields = decoded.compactMap { _, account, sealed -> (sealed: Data, field: String)? in
            guard let account, let sealed = sealed ?? nil else { return nil }
            return (sealed, Self.detailsField(owner, issuer: account.issuer, accountName: account.accountName))
        }
        let opened = try checked(fields, fields.isEmpty ? [] : await sealer.opening(fields))
        return decoded.compactMap { row, account, sealed -> Account? in
            guard var account else { return nil }
            guard (sealed ?? nil) != nil else { return account }
            return diagnostics.readable(operation, row.recordName("account", owner: owner)) {
                let text = try opened.text(Self.detailsField(owner, issuer: account.issuer, accountName: account.accountName))
                account.details = try JSONDecoder().decode(AccountDetails.self, from: Data(text.utf8))
                return account
            }
        }
    }
}
