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

/// A `mechanism` row, every column decoded and checked.
struct MechanismRow {
    let uuid: String
    let issuer: String
    let accountName: String
    let type: String
    let algorithm: String
    let secret: Data
    let digits: Int
    let period: Int
    let counter: Int64
    let uid: String?
    let resourceId: String?
    let timeAdded: Double
    let registrationEndpoint: String?
    let authenticationEndpoint: String?
    let messageId: String?
    let challenge: Data?
    /// Which ``MechanismBinding`` the secret is sealed under.
    let binding: Int

    /// - Parameter store: Names the database in errors.
    init(_ row: Row, store: String) throws {
        let record = "\(store) \(row.recordName("mechanism", key: "mechanismUUID"))"
        uuid = try row.checked("mechanismUUID", in: record)
        issuer = try row.checked("issuer", in: record)
        accountName = try row.checked("accountName", in: record)
        type = try row.checked("type", in: record)
        algorithm = try row.checked("algorithm", in: record)
        secret = try row.checked("secret", in: record)
        digits = try row.checked("digits", in: record)
        period = try row.checked("period", in: record)
        counter = try row.checked("counter", in: record)
        uid = try row.checked("uid", in: record)
        resourceId = try row.checked("resourceId", in: record)
        timeAdded = try row.checked("timeAdded", in: record)
        registrationEndpoint = try row.checked("registrationEndpoint", in: record)
        authenticationEndpoint = try row.checked("authenticationEndpoint", in: record)
        messageId = try row.checked("messageId", in: record)
        challenge = try row.checked("challenge", in: record)
        binding = try row.checked("binding", in: record)
    }
}

/// A `notification` row, every column decoded and checked; the challenge stays sealed.
struct NotificationRow {
    /// The notification, with an empty challenge.
    let notification: PushNotification
    /// Its sealed challenge.
    let sealedChallenge: Data

    init(_ row: Row, store: String) throws {
        let record = "\(store) \(row.recordName("notification", key: "messageId"))"
        sealedChallenge = try row.checked("challenge", in: record)
        notification = PushNotification(
            messageId: try row.checked("messageId", in: record), mechanismUUID: try row.checked("mechanismUUID", in: record),
            challenge: "", ttl: try row.checked("ttl", in: record),
            timeAdded: Date(timeIntervalSinceReferenceDate: try row.checked("timeAdded", in: record)),
            pending: try row.checked("pending", in: record), approved: try row.checked("approved", in: record),
            loadBalanceKey: try row.checked("loadBalanceKey", in: record), message: try row.checked("message", in: record),
            customPayload: try row.checked("customPayload", in: record),
            numbersChallenge: try row.checked("numbersChallenge", in: record),
            contextInfo: try row.checked("contextInfo", in: record), pushType: try row.checked("pushType", in: record))
    }
}

extension Account {
    /// An `account` row, every column decoded and checked.
    init(_ row: Row, store: String) throws {
        let record = "\(store) account \((try? row.decode(String.self, forColumn: "issuer")) ?? "?")"
        self.init(
            issuer: try row.checked("issuer", in: record), accountName: try row.checked("accountName", in: record),
            displayIssuer: try row.checked("displayIssuer", in: record),
            displayAccountName: try row.checked("displayAccountName", in: record),
            imageURL: try row.checked("imageURL", in: record), backgroundColor: try row.checked("backgroundColor", in: record),
            timeAdded: Date(timeIntervalSinceReferenceDate: try row.checked("timeAdded", in: record)),
            policies: try row.checked("policies", in: record), lockingPolicy: try row.checked("lockingPolicy", in: record),
            isLocked: try row.checked("isLocked", in: record))
    }
}
