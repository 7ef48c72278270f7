import CofferStorage
import Foundation
import GRDB

// Rows of SQLiteStorageClient's tables, decoded column by column with a check. GRDB's `row[…]`
// subscripts trap when a value has another type than asked for, and a column changed with
// `sqlite3` (`counter = 'abc'`, `digits = 1e30`) or a damaged page can hold anything: such a
// row must be one unreadable record (counted, reported, left in place), not a crash of every
// command that lists the store.

extension Row {
    /// The value of `column`; one of another type throws ``StorageError/corrupted(location:reason:)``
    /// naming the record and the column (never the value).
    func checked<Value: DatabaseValueConvertible>(_ column: String, in record: @autoclosure () -> String) throws -> Value {
        do {
            return try decode(Value.self, forColumn: column)
        } catch {
            throw StorageError.corrupted(location: record(), reason: "its \(column) column holds a value of the wrong type")
        }
    }

    /// How a row is named in reports: `mechanism <uuid>`, or `?` when even that cannot be read.
    func recordName(_ table: String, key: String) -> String {
        "\(table) \((try? decode(String.self, forColumn: key)) ?? "?")"
    }
}

/// Reads a row's columns in the order they were selected, each checked. By index, not by name:
/// a listing of 10,000 accounts decodes 100,000 values, and looking each name up costs more
/// than decoding it.
private struct ColumnReader {
    let row: Row
    let store: String
    /// The table and the column whose value names the record in an error (worked out only then).
    let table: String
    let key: String
    let columns: [String]
    var index = 0

    /// The record as errors name it.
    var record: String { "\(store) \(row.recordName(table, key: key))" }

    /// The next column's value, converted by its type's own `fromDatabaseValue`, which answers
    /// `nil` for a value of another type (an optional's: `nil` inside for NULL). Not GRDB's
    /// `row.decode`: its generic decoding looked type metadata up at run time for every column
    /// of every row, a tenth of a listing.
    mutating func next<Value: DatabaseValueConvertible>() throws -> Value {
        defer { index += 1 }
        guard let value = Value.fromDatabaseValue(row[row.startIndex.advanced(by: index)].1) else {
            throw StorageError.corrupted(location: record, reason: "its \(columns[index]) column holds a value of the wrong type")
        }
        return value
    }
}

/// A `mechanism` row, every column decoded and checked; its fields read as ``StoredMechanism``'s.
@dynamicMemberLookup
struct MechanismRow {
    let stored: StoredMechanism
    /// Which `MechanismBinding` the secret is sealed under.
    let binding: Int

    subscript<Value>(dynamicMember path: KeyPath<StoredMechanism, Value>) -> Value { stored[keyPath: path] }

    static let columns = ["mechanismUUID", "issuer", "accountName", "type", "algorithm", "secret", "digits", "period", "counter",
                          "uid", "resourceId", "timeAdded", "registrationEndpoint", "authenticationEndpoint", "messageId",
                          "challenge", "binding"]
    /// `SELECT` of the columns in the order ``init(_:store:)`` reads them; add `WHERE …`.
    static let select = "SELECT \(columns.joined(separator: ", ")) FROM mechanism "

    /// - Parameter store: Names the database in errors.
    init(_ row: Row, store: String) throws {
        var reader = ColumnReader(row: row, store: store, table: "mechanism", key: "mechanismUUID", columns: Self.columns)
        stored = StoredMechanism(
            uuid: try reader.next(), issuer: try reader.next(), accountName: try reader.next(), type: try reader.next(),
            algorithm: try reader.next(), secret: try reader.next(), digits: try reader.next(), period: try reader.next(),
            counter: try reader.next(), uid: try reader.next(), resourceId: try reader.next(), timeAdded: try reader.next(),
            registrationEndpoint: try reader.next(), authenticationEndpoint: try reader.next(), messageId: try reader.next(),
            challenge: try reader.next())
        binding = try reader.next()
    }
}

/// A `notification` row, every column decoded and checked; the challenge stays sealed.
struct NotificationRow {
    /// The notification, with an empty challenge.
    let notification: PushNotification
    /// Its sealed challenge.
    let sealedChallenge: Data

    static let columns = ["challenge", "messageId", "mechanismUUID", "ttl", "timeAdded", "pending", "approved", "loadBalanceKey",
                          "message", "customPayload", "numbersChallenge", "contextInfo", "pushType"]
    static let select = "SELECT \(columns.joined(separator: ", ")) FROM notification "

    init(_ row: Row, store: String) throws {
        var reader = ColumnReader(row: row, store: store, table: "notification", key: "messageId", columns: Self.columns)
        sealedChallenge = try reader.next()
        notification = PushNotification(
            messageId: try reader.next(), mechanismUUID: try reader.next(), challenge: "", ttl: try reader.next(),
            timeAdded: Date(timeIntervalSinceReferenceDate: try reader.next()), pending: try reader.next(), approved: try reader.next(),
            loadBalanceKey: try reader.next(), message: try reader.next(), customPayload: try reader.next(),
            numbersChallenge: try reader.next(), contextInfo: try reader.next(), pushType: try reader.next())
    }
}

/// An `account` row's columns, in the order ``Account/init(_:store:)`` reads them.
enum AccountRow {
    static let columns = ["issuer", "accountName", "displayIssuer", "displayAccountName", "imageURL", "backgroundColor", "timeAdded",
                          "policies", "lockingPolicy", "isLocked"]
    /// The sealed ``AccountDetails`` (schema v4), opened by the client, not by ``Account/init(_:store:)``.
    static let detailsColumn = "details"
    static let select = "SELECT \(columns.joined(separator: ", ")), \(detailsColumn) FROM account "
    /// The names alone (``AccountNames``): the first four columns.
    static let selectNames = "SELECT \(columns.prefix(4).joined(separator: ", ")) FROM account "
    /// The order of every listing.
    static let listingOrder = "ORDER BY timeAdded, issuer, accountName"
}

extension AccountNames {
    /// The names of an `account` row (selected with ``AccountRow/selectNames``), checked.
    init(_ row: Row, store: String) throws {
        var reader = ColumnReader(row: row, store: store, table: "account", key: "issuer", columns: AccountRow.columns)
        self.init(issuer: try reader.next(), accountName: try reader.next(),
                  displayIssuer: try reader.next(), displayAccountName: try reader.next())
    }
}

extension Account {
    /// An `account` row (selected with ``AccountRow/select``), every column decoded and checked.
    init(_ row: Row, store: String) throws {
        var reader = ColumnReader(row: row, store: store, table: "account", key: "issuer", columns: AccountRow.columns)
        self.init(
            issuer: try reader.next(), accountName: try reader.next(), displayIssuer: try reader.next(),
            displayAccountName: try reader.next(), imageURL: try reader.next(), backgroundColor: try reader.next(),
            timeAdded: Date(timeIntervalSinceReferenceDate: try reader.next()), policies: try reader.next(),
            lockingPolicy: try reader.next(), isLocked: try reader.next())
    }
}
