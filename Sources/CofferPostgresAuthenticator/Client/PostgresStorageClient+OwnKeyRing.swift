import CofferPostgres
import CofferMFAEngine
import CofferAuthenticator
import CofferStorage
import Foundation
import PostgresNIO

extension PostgresStorageClient {
    /// Moves the owner's secrets that are sealed under the database's shared key ring into this
    /// client's own (``hasOwnKeyRing``), in one transaction, and returns how many sealed fields
    /// moved: what an owner who used the shared ring (before owners had rings of their own) does
    /// once. The `coffer` tool does it when an owner's ring has no key yet.
    ///
    /// Every mechanism, notification and account with details of the owner is locked; each sealed field that does not
    /// open under the owner's ring is opened under the shared one (with the database's
    /// key-encryption key), sealed again under the owner's and written back. When any field
    /// opens under neither, or any row cannot be read, nothing changes and the error names it.
    ///
    /// - Throws: `PostgresStorageError` (`.wrongKeyEncryptionKey` when a ring's key does not
    ///   open, `.unavailable`), `StorageError` naming a record that opens under neither ring.
    public func moveToOwnKeyRing() async throws -> Int {
        guard hasOwnKeyRing else { return 0 }
        let owner = self.owner, keyAlias = self.keyAlias, logger = database.logger
        let shared = FieldSealer(encryptor: AESGCMEncryptor(keyAlias: keyAlias, keyStore: database.keys))
        return try await KeyRingCheck.retrying(alias: keyAlias, keys: keys, during: "move the secrets to the owner's key ring") {
            try await self.transaction("move the secrets to the owner's key ring") { connection in
                let mechanisms = try await connection.rows("\(unescaped: StoredMechanism.select)WHERE owner = \(owner) FOR UPDATE", logger: logger)
                    .map { try StoredMechanism($0, owner: owner) }
                let notifications = try await connection.rows("\(unescaped: NotificationRecord.select)WHERE owner = \(owner) FOR UPDATE",
                                                              logger: logger)
                    .map { try NotificationRecord($0, owner: owner) }
                var fields: [(sealed: Data, field: String, column: SealedColumn)] = []
                for record in mechanisms {
                    fields.append((record.secret, OwnerBinding.secret(owner, record), .secret(uuid: record.uuid)))
                    if let challenge = record.challenge {
                        fields.append((challenge, OwnerBinding.challenge(owner, mechanism: record.uuid), .challenge(uuid: record.uuid)))
                    }
                }
                let details = try await connection.rows("""
                    SELECT issuer, account_name, details FROM coffer_accounts WHERE owner = \(owner) AND details IS NOT NULL FOR UPDATE
                    """, logger: logger)
                for row in details {
                    let (issuer, accountName, sealed) = try row.decode((String, String, Data).self)
                    fields.append((sealed, Self.detailsField(owner, issuer: issuer, accountName: accountName),
                                   .details(issuer: issuer, accountName: accountName)))
                }
                for record in notifications {
                    fields.append((record.sealedChallenge, record.field(owner: owner),
                                   .notification(uuid: record.notification.mechanismUUID, messageId: record.notification.messageId)))
                }
                // Those already under the owner's ring stay as they are.
                let all = fields.map { ($0.sealed, $0.field) }
                let underOwn = try self.checked(all, await self.sealer.opening(all))
                let pending = fields.filter { (try? underOwn.text($0.field)) == nil }
                guard !pending.isEmpty else { return 0 }
                let pairs = pending.map { ($0.sealed, $0.field) }
                let opened = try self.checked(pairs, await shared.opening(pairs))
                let texts = try pending.map { (text: try opened.text($0.field), field: $0.field) }
                let resealed = try await self.sealing(texts)
                try await KeyRingCheck.require(resealed, alias: keyAlias, of: self.keys, on: connection, logger: logger)
                for (field, sealed) in zip(pending, resealed) {
                    switch field.column {
                    case .secret(let uuid):
                        try await connection.rows("UPDATE coffer_mechanisms SET secret = \(sealed) WHERE owner = \(owner) AND mechanism_uuid = \(uuid)",
                                                  logger: logger)
                    case .challenge(let uuid):
                        try await connection.rows("UPDATE coffer_mechanisms SET challenge = \(sealed) WHERE owner = \(owner) AND mechanism_uuid = \(uuid)",
                                                  logger: logger)
                    case let .details(issuer, accountName):
                        try await connection.rows("""
                            UPDATE coffer_accounts SET details = \(sealed) WHERE owner = \(owner) AND issuer = \(issuer) AND account_name = \(accountName)
                            """, logger: logger)
                    case let .notification(uuid, messageId):
                        try await connection.rows("""
                            UPDATE coffer_notifications SET challenge = \(sealed)
                            WHERE owner = \(owner) AND mechanism_uuid = \(uuid) AND message_id = \(messageId)
                            """, logger: logger)
                    }
                }
                return pending.count
            }
        }
    }
}

/// Where a sealed field is kept.
private enum SealedColumn: Sendable {
    case secret(uuid: String)
    case challenge(uuid: String)
    case notification(uuid: String, messageId: String)
    case details(issuer: String, accountName: String)
}
