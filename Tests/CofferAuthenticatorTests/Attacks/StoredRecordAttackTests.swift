import CofferAuthenticator
import CofferStorage
import Foundation
import GRDB
import Logging
import TestSupport
import Testing

/// R8, items 1, 2 and 8 of the attack review, against the library: each test reproduces the
/// attack as the review ran it and fails on the code before the fix.
@Suite("R8 attacks on stored records: nothing lost, replaced or misattributed")
struct StoredRecordAttackTests {
    let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    func client(_ path: String, _ keys: any KeyStore) throws -> SQLiteStorageClient {
        try SQLiteStorageClient(path: path, encryptor: AESGCMEncryptor(keyAlias: "authenticator", keyStore: keys), logger: Logger(label: "r8"))
    }

    func totp(_ uuid: String, _ issuer: String, _ account: String = "alice") -> Mechanism {
        Mechanism(mechanismUUID: uuid, issuer: issuer, accountName: account, type: .totp, secret: secret)
    }

    func rowCount(_ path: String) throws -> Int {
        try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM mechanism") ?? 0 }
    }

    @Test("1: a migration refuses to start while a source record cannot be read, and the source keeps it")
    func migrationRefusesUnreadable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("source.sqlite").path
        let keys = MemoryKeyStore()
        let source = try client(path, keys)
        for (index, issuer) in ["Bank", "Mail", "Shop"].enumerated() { try source.insertMechanism(totp("m\(index)", issuer)) }
        // One damaged row, as a bad sector or a hand edit would leave it.
        try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE mechanism SET secret = x'00' WHERE mechanismUUID = 'm1'") }
        let target = MemoryStorageClient()
        #expect {
            try StorageMigration.move(from: try client(path, keys), to: target)
        } throws: { error in
            guard case let .unreadableSource(count, records) = error as? StorageMigration.Failure else { return false }
            return count == 1 && records.first?.contains("m1") == true
        }
        #expect(target.getAllAccounts().isEmpty, "nothing was copied")
        #expect(try rowCount(path) == 3, "nothing was removed, the damaged row least of all")

        // With the key missing, every record is unreadable: the same refusal.
        #expect(throws: StorageMigration.Failure.self) { try StorageMigration.move(from: try client(path, MemoryKeyStore()), to: target) }
        #expect(try rowCount(path) == 3)
    }

    @Test("1: a migration killed halfway can be run again: equal objects in the target are accepted")
    func migrationResumes() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let source = try client(directory.appending("source.sqlite").path, MemoryKeyStore())
        let target = try client(directory.appending("target.sqlite").path, MemoryKeyStore())
        for (index, issuer) in ["Bank", "Mail"].enumerated() { try source.insertMechanism(totp("m\(index)", issuer)) }
        // What a migration killed after its first copy leaves: Bank in both stores.
        let bank = try #require(source.getAccount(accountIdentifier: Account.identifier(issuer: "Bank", accountName: "alice")))
        target.setAccount(account: bank)
        try target.insertMechanism(try #require(source.getMechanismForUUID(uuid: "m0")))
        let report = try StorageMigration.move(from: source, to: target)
        #expect(report == StorageMigration.Report(accounts: 2, mechanisms: 2))
        #expect(source.isEmpty())
        #expect(target.getAllAccounts().count == 2)

        // A different object under the same id in the target is refused, and the source kept.
        try source.insertMechanism(totp("m0", "Other"))
        #expect(throws: StorageMigration.Failure.self) { try StorageMigration.move(from: source, to: target) }
        #expect(source.getMechanismForUUID(uuid: "m0")?.issuer == "Other")
        #expect(target.getMechanismForUUID(uuid: "m0")?.issuer == "Bank")
    }

    @Test("1: removing an account never cascades over a mechanism it still owns, readable or not")
    func noCascade() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let keys = MemoryKeyStore()
        let store = try client(path, keys)
        try store.insertMechanism(totp("m", "Bank"))
        let blind = try client(path, MemoryKeyStore())  // sees the account, cannot read the mechanism
        let account = try #require(blind.getAccount(accountIdentifier: Account.identifier(issuer: "Bank", accountName: "alice")))
        #expect(blind.getMechanismsForAccount(account: account).isEmpty)
        #expect(!blind.removeAccount(account: account))
        #expect(blind.lastError is StorageClientError)
        #expect(try client(path, keys).getMechanismForUUID(uuid: "m")?.secret == secret, "the secret is still there")
        #expect(throws: AuthenticatorError.self) { try AuthenticatorClient(storage: blind).removeAccount(account) }
        #expect(try rowCount(path) == 1)
    }

    @Test("2: a write never replaces another object stored under the same id, or the same account and type")
    func noReplace() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try client(directory.appending("a.sqlite").path, MemoryKeyStore())
        try store.insertMechanism(totp("bank-id", "Bank"))
        // The spec's setMechanism with Bank's UUID on Mail's mechanism: refused, Bank intact.
        #expect(!store.setMechanism(mechanism: totp("bank-id", "Mail")))
        #expect(store.getMechanismForUUID(uuid: "bank-id")?.issuer == "Bank")
        // Another UUID for Bank's TOTP: refused too (INSERT OR REPLACE deleted the old row).
        #expect(!store.setMechanism(mechanism: totp("other-id", "Bank")))
        #expect(throws: StorageClientError.self) { try store.insertMechanism(totp("other-id", "Bank")) }
        #expect(store.getMechanismForUUID(uuid: "other-id") == nil)
        // The same object is still updated in place.
        var renewed = totp("bank-id", "Bank")
        renewed.digits = 8
        #expect(store.setMechanism(mechanism: renewed))
        #expect(store.getMechanismForUUID(uuid: "bank-id")?.digits == 8)
    }

    @Test("2: an Aegis entry carrying another account's UUID is imported under a new one; that account keeps its secret")
    func aegisUUIDClash() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try client(directory.appending("a.sqlite").path, MemoryKeyStore())
        let authenticator = AuthenticatorClient(storage: store)
        try authenticator.addAccount(uri: "otpauth://totp/Bank:alice?secret=\(secret)&issuer=Bank")
        let bankID = try #require(authenticator.accounts().first?.mechanisms.first?.mechanismUUID)
        let hostile = try JSONDecoder().decode(AegisVault.Entry.self, from: Data("""
            {"type": "totp", "uuid": "\(bankID)", "name": "mallory", "issuer": "Evil",
             "info": {"secret": "JBSWY3DPEHPK3PXP", "algo": "SHA1", "digits": 6, "period": 30}}
            """.utf8))
        let report = try authenticator.importAegis([hostile], overwrite: false)
        #expect(report.imported.count == 1 && report.renumbered.count == 1)
        #expect(store.getMechanismForUUID(uuid: bankID)?.secret == secret, "Bank's secret survived")
        #expect(authenticator.accounts().count == 2)
    }

    @Test("2: with the key file missing, an add is refused and the undecryptable row is left byte for byte")
    func addWithKeyMissing() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let keyDirectory = directory.appending("keys")
        try client(path, FileKeyStore(directory: keyDirectory)).insertMechanism(totp("bank-id", "Bank"))
        let before = try DatabaseQueue(path: path).read { try Data.fetchOne($0, sql: "SELECT secret FROM mechanism") }
        try FileManager.default.moveItem(at: keyDirectory, to: directory.appending("keys.away"))

        let blind = try client(path, FileKeyStore(directory: keyDirectory))
        #expect(blind.keyProblem != nil)
        #expect {
            try AuthenticatorClient(storage: blind).addAccount(uri: "otpauth://totp/Bank:alice?secret=JBSWY3DPEHPK3PXP&issuer=Bank")
        } throws: { error in
            "\(error)".contains("key") || "\(error)".contains("already has")
        }
        #expect { try blind.insertMechanism(totp("new", "Mail")) } throws: { error in
            if case .keyUnavailable? = error as? StorageClientError { return true }
            return false
        }
        #expect(!FileManager.default.fileExists(atPath: keyDirectory.appendingPathComponent("authenticator.key").path),
                "no second key was made")
        #expect(try DatabaseQueue(path: path).read { try Data.fetchOne($0, sql: "SELECT secret FROM mechanism") } == before)
        #expect(try rowCount(path) == 1)

        // Restored, the key opens everything again and writes work.
        try FileManager.default.moveItem(at: directory.appending("keys.away"), to: keyDirectory)
        try blind.insertMechanism(totp("new", "Mail"))
        #expect(blind.getMechanismForUUID(uuid: "bank-id")?.secret == secret)
    }

    @Test("8: a plain column changed with sqlite3 (issuer swap, counter rollback, digits) makes the row unreadable, never misattributed")
    func boundColumns() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let keys = MemoryKeyStore()
        let store = try client(path, keys)
        try store.insertMechanism(totp("bank-id", "Bank"))
        try store.insertMechanism(totp("mail-id", "Mail"))
        var hotp = totp("hotp-id", "Counter")
        hotp.type = .hotp
        try store.insertMechanism(hotp)
        for _ in 0..<5 { _ = try store.advanceCounter(mechanismUUID: "hotp-id") }

        // As sqlite3 would (foreign keys off); the unique index on (issuer, accountName, type)
        // forbids a direct swap, so through a free name.
        var attacker = Configuration()
        attacker.foreignKeysEnabled = false
        try DatabaseQueue(path: path, configuration: attacker).write { db in
            try db.execute(sql: "UPDATE mechanism SET issuer = 'tmp' WHERE issuer = 'Bank'")
            try db.execute(sql: "UPDATE mechanism SET issuer = 'Bank' WHERE issuer = 'Mail'")
            try db.execute(sql: "UPDATE mechanism SET issuer = 'Mail' WHERE issuer = 'tmp'")
            try db.execute(sql: "UPDATE mechanism SET counter = 0 WHERE mechanismUUID = 'hotp-id'")
        }
        let reader = try client(path, keys)
        #expect(reader.getMechanismForUUID(uuid: "bank-id") == nil)
        #expect(reader.getMechanismForUUID(uuid: "mail-id") == nil)
        #expect(reader.getMechanismForUUID(uuid: "hotp-id") == nil)
        #expect(reader.unreadableRecordCount == 3)
        #expect(throws: (any Error).self) { try reader.advanceCounter(mechanismUUID: "hotp-id") }

        try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE mechanism SET digits = 6, period = 30") }
        let fresh = try client(path, keys)
        #expect(fresh.getMechanismForUUID(uuid: "mail-id") == nil, "still bound")
        ReliabilityReport.record("R8", "plain mechanism columns changed with sqlite3 (issuer swap, counter rollback)",
                                 tried: "3 rows", outcome: "\(reader.unreadableRecordCount) unreadable, 0 misattributed")
    }

    @Test("8: a column edited to a value of the wrong type is one unreadable record, not a crash of every listing", arguments: [
        "UPDATE mechanism SET counter = 'abc' WHERE issuer = 'Bank'",
        "UPDATE mechanism SET digits = 1e30 WHERE issuer = 'Bank'",
        "UPDATE mechanism SET binding = 'x' WHERE issuer = 'Bank'",
        "UPDATE mechanism SET timeAdded = 'yesterday' WHERE issuer = 'Bank'",
        "UPDATE mechanism SET secret = 42 WHERE issuer = 'Bank'",
        "UPDATE account SET timeAdded = 'yesterday' WHERE issuer = 'Bank'",
        "UPDATE account SET isLocked = 'maybe' WHERE issuer = 'Bank'",
        "UPDATE account SET policies = x'ff00' WHERE issuer = 'Bank'",
    ])
    func wrongTypedColumns(edit: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let keys = MemoryKeyStore()
        let store = try client(path, keys)
        try store.insertMechanism(totp("bank-id", "Bank"))
        try store.insertMechanism(totp("mail-id", "Mail"))
        var attacker = Configuration()
        attacker.foreignKeysEnabled = false
        try DatabaseQueue(path: path, configuration: attacker).write { try $0.execute(sql: edit) }

        let reader = try client(path, keys)
        let accounts = reader.getAllAccounts()
        let mechanisms = accounts.flatMap { reader.getMechanismsForAccount(account: $0) }
        #expect(mechanisms.map(\.issuer) == ["Mail"], "Mail is still there; Bank is left out")
        #expect(reader.unreadableRecordCount == 1)
        #expect(reader.unreadableRecords.first?.contains("column holds a value of the wrong type") == true, "\(reader.unreadableRecords)")
        #expect(try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM mechanism") } == 2, "nothing removed")
    }

    @Test("8: a mechanism whose account row was deleted or renamed behind the client is counted, not invisible", arguments: [
        "DELETE FROM account WHERE issuer = 'Bank'",
        "UPDATE account SET issuer = 'Mail2' WHERE issuer = 'Bank'",
        "UPDATE mechanism SET issuer = x'ff' WHERE issuer = 'Bank'",
    ])
    func orphanedMechanism(edit: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let keys = MemoryKeyStore()
        let store = try client(path, keys)
        try store.insertMechanism(totp("bank-id", "Bank"))
        try store.insertMechanism(totp("mail-id", "Mail"))
        var attacker = Configuration()
        attacker.foreignKeysEnabled = false
        try DatabaseQueue(path: path, configuration: attacker).write { try $0.execute(sql: edit) }
        let reader = try client(path, keys)
        _ = reader.getAllAccounts()
        #expect(reader.unreadableRecordCount == 1)
        #expect(reader.unreadableRecords.first?.contains("no account owns it") == true, "\(reader.unreadableRecords)")
    }

    @Test("8: rows written before the binding (v1) are re-sealed under it when the store is opened with the right key")
    func legacyRowsBound() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let keys = MemoryKeyStore()
        try client(path, keys).insertMechanism(totp("bank-id", "Bank"))
        // What a v1 store holds: the secret bound to its UUID alone, binding 1.
        let encryptor = AESGCMEncryptor(keyAlias: "authenticator", keyStore: keys)
        let legacy = try await encryptor.encrypt(data: IdentityBinding.wrap(Data(secret.utf8), identity: "mechanism/bank-id/secret"))
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE mechanism SET secret = ?, binding = 1", arguments: [legacy])
        }
        let plan = try await DatabaseQueue(path: path).read {
            try Row.fetchAll($0, sql: "EXPLAIN QUERY PLAN SELECT * FROM mechanism WHERE binding = 1").map { $0["detail"] as String? ?? "" }.joined()
        }
        #expect(plan.contains("mechanism_legacy_binding"), "found through the partial index, not a scan: \(plan)")
        let reopened = try client(path, keys)
        #expect(reopened.getMechanismForUUID(uuid: "bank-id")?.secret == secret)
        #expect(reopened.keyProblem == nil, "checking the key binds the legacy rows")
        #expect(try await DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT binding FROM mechanism") } == 2)
        // Now bound: the issuer cannot be changed under it.
        var sqlite3 = Configuration()
        sqlite3.foreignKeysEnabled = false
        try await DatabaseQueue(path: path, configuration: sqlite3).write {
            try $0.execute(sql: "UPDATE mechanism SET issuer = 'Mail'; UPDATE account SET issuer = 'Mail'")
        }
        #expect(try client(path, keys).getMechanismForUUID(uuid: "bank-id") == nil)
    }

    @Test("10: a counter that cannot move on is an error, not a trap")
    func counterOverflow() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try client(directory.appending("a.sqlite").path, MemoryKeyStore())
        var hotp = totp("h", "Bank")
        hotp.type = .hotp
        hotp.counter = .max
        try store.insertMechanism(hotp)
        #expect { try store.advanceCounter(mechanismUUID: "h") } throws: { error in
            if case .counterExhausted? = error as? StorageClientError { return true }
            return false
        }
        #expect(throws: AuthenticatorError.self) { try AuthenticatorClient(storage: store).code(for: hotp) }
        #expect(throws: (any Error).self) { try MemoryStorageClient().advanceCounter(mechanismUUID: "none") }
    }

    @Test("10, 11: a counter of 2^64-1 and a name of 4,001 bytes in one character are refused when parsed")
    func hostileURIs() throws {
        #expect(throws: URIParseError.self) {
            try MechanismURI.parse("otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank&counter=18446744073709551615")
        }
        let heavy = "a" + String(repeating: "\u{301}", count: 2_000)
        #expect(heavy.count == 1 && heavy.utf8.count == 4_001)
        #expect(throws: URIParseError.self) {
            try MechanismURI.parse("otpauth://totp/Bank:x?secret=\(secret)&issuer=" + heavy.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        }
    }

    @Test("12: a vault whose password slots ask for minutes of scrypt is refused before any is run")
    func hostileVaultSlots() throws {
        let slot = """
            {"type": 1, "uuid": "u", "key": "00", "key_params": {"nonce": "00", "tag": "00"},
             "n": 1048576, "r": 2, "p": 16, "salt": "00"}
            """
        let vault = """
            {"version": 1, "header": {"slots": [\(Array(repeating: slot, count: 8).joined(separator: ","))],
             "params": {"nonce": "00", "tag": "00"}}, "db": "AAAA"}
            """
        #expect {
            try AegisVault.read(Data(vault.utf8), password: "anything")
        } throws: { error in
            "\(error)".contains("scrypt work")
        }
    }
}
