import CofferPostgres
import CofferMFAEngine
import CofferAuthenticator
import CofferStorage
import Foundation
import PostgresNIO

// Rows of PostgresStorageClient's tables, decoded column by column. A column that does not
// decode (changed by hand to something else) makes its row one unreadable record, named with
// the column, never with the value.

/// Reads a row's columns in the order they were selected.
struct ColumnCursor {
    let row: PostgresRandomAccessRow
    let record: String
    let columns: [String]
    var index = 0

    init(_ row: PostgresRow, record: String, columns: [String]) {
        self.row = row.makeRandomAccess()
        self.record = record
        self.columns = columns
    }

    mutating func next<Value: PostgresDecodable>(_: Value.Type = Value.self) throws -> Value {
        defer { index += 1 }
        do {
            return try row[index].decode(Value.self)
        } catch {
            throw StorageError.corrupted(location: record, reason: "its \(columns[index]) column holds a value of the wrong type")
        }
    }
}

extension PostgresRow {
    /// How a row is named in reports: `<table> <first column> of <owner>`, or `?` for a first
    /// column that cannot be read.
    func recordName(_ table: String, owner: String) -> String {
        "\(table) \((try? makeRandomAccess()[0].decode(String.self)) ?? "?") of \(owner)"
    }
}

/// The columns of an account, in the order ``Account/init(_:owner:)`` reads them.
enum AccountColumns {
    static let names = ["issuer", "account_name", "display_issuer", "display_account_name", "image_url", "background_color",
                        "time_added", "policies", "locking_policy", "is_locked"]
    /// The sealed `AccountDetails` follow the named columns (schema v6), opened by the client.
    static let select = "SELECT \(names.joined(separator: ", ")), details FROM coffer_accounts "
    /// The names alone (``AccountNames``): the first four columns.
    static let selectNames = "SELECT \(names.prefix(4).joined(separator: ", ")) FROM coffer_accounts "
    /// The order of every listing.
    static let listingOrder = "ORDER BY time_added, issuer, account_name"
}

extension AccountNames {
    /// The names of an account row selected with ``AccountColumns/selectNames``, checked.
    init(_ row: PostgresRow, owner: String) throws {
        var cursor = ColumnCursor(row, record: row.recordName("account", owner: owner), columns: AccountColumns.names)
        self.init(issuer: try cursor.next(), accountName: try cursor.next(),
                  displayIssuer: try cursor.next(), displayAccountName: try cursor.next())
    }
}

extension Account {
    /// An account row selected with ``AccountColumns/select``.
    init(_ row: PostgresRow, owner: String) throws {
        var cursor = ColumnCursor(row, record: row.recordName("account", owner: owner), columns: AccountColumns.names)
        self.init(
            issuer: try cursor.next(), accountName: try cursor.next(), displayIssuer: try cursor.next(),
            displayAccountName: try cursor.next(), imageURL: try cursor.next(), backgroundColor: try cursor.next(),
            timeAdded: Date(timeIntervalSinceReferenceDate: try cursor.next()), policies: try cursor.next(),
            lockingPolicy: try cursor.next(), isLocked: try cursor.next())
    }
}


/// A row of `coffer_mechanisms`, read with postgres-nio.
extension StoredMechanism {
    static let names = ["mechanism_uuid", "issuer", "account_name", "type", "algorithm", "secret", "digits", "period", "counter",
                        "uid", "resource_id", "time_added", "registration_endpoint", "authentication_endpoint", "message_id", "challenge"]
    static let select = "SELECT \(names.joined(separator: ", ")) FROM coffer_mechanisms "

    init(_ row: PostgresRow, owner: String) throws {
        var cursor = ColumnCursor(row, record: row.recordName("mechanism", owner: owner), columns: Self.names)
        self.init(
            uuid: try cursor.next(), issuer: try cursor.next(), accountName: try cursor.next(), type: try cursor.next(),
            algorithm: try cursor.next(), secret: try cursor.next(), digits: try cursor.next(), period: try cursor.next(),
            counter: try cursor.next(), uid: try cursor.next(), resourceId: try cursor.next(), timeAdded: try cursor.next(),
            registrationEndpoint: try cursor.next(), authenticationEndpoint: try cursor.next(), messageId: try cursor.next(),
            challenge: try cursor.next())
    }

    /// Its sealed fields, each with the identity it must open under.
    func sealedFields(owner: String) -> [(sealed: Data, field: String)] {
        var fields = [(secret, OwnerBinding.secret(owner, self))]
        if let challenge { fields.append((challenge, OwnerBinding.challenge(owner, mechanism: uuid))) }
        return fields
    }

    /// The mechanism, with its fields as opened.
    func mechanism(owner: String, _ opened: OpenedFields) throws -> Mechanism {
        try mechanism(secret: try opened.text(OwnerBinding.secret(owner, self)),
                      challenge: try challenge.map { _ in try opened.text(OwnerBinding.challenge(owner, mechanism: uuid)) },
                      location: "mechanism \(uuid) of \(owner)")
    }
}

/// A notification row: the notification with an empty challenge, and the challenge sealed.
struct NotificationRecord: Sendable {
    let notification: PushNotification
    let sealedChallenge: Data

    static let names = ["message_id", "mechanism_uuid", "challenge", "ttl", "time_added", "pending", "approved", "load_balance_key",
                        "message", "custom_payload", "numbers_challenge", "context_info", "push_type"]
    static let select = "SELECT \(names.joined(separator: ", ")) FROM coffer_notifications "

    init(_ row: PostgresRow, owner: String) throws {
        var cursor = ColumnCursor(row, record: row.recordName("notification", owner: owner), columns: Self.names)
        let messageId: String = try cursor.next()
        let mechanismUUID: String = try cursor.next()
        sealedChallenge = try cursor.next()
        notification = PushNotification(
            messageId: messageId, mechanismUUID: mechanismUUID, challenge: "", ttl: try cursor.next(),
            timeAdded: Date(timeIntervalSinceReferenceDate: try cursor.next()), pending: try cursor.next(), approved: try cursor.next(),
            loadBalanceKey: try cursor.next(), message: try cursor.next(), customPayload: try cursor.next(),
            numbersChallenge: try cursor.next(), contextInfo: try cursor.next(), pushType: try cursor.next())
    }

    /// The identity its challenge is sealed under.
    func field(owner: String) -> String {
        OwnerBinding.challenge(owner, mechanism: notification.mechanismUUID, messageId: notification.messageId)
    }
}
