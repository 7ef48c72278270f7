import CofferAuthenticator
import Logging
import Foundation
import TestSupport
import GRDB
import CofferStorage
import CofferStorageTesting
import CofferAuthenticatorTesting
import Testing

@Suite("SQLiteStorageClient on real SQLite files")
struct SQLiteStorageClientTests {
    func makeClient(_ path: String, keys: any KeyStore = MemoryKeyStore(), logger: Logger? = nil) throws -> SQLiteStorageClient {
        try SQLiteStorageClient(
            path: path, encryptor: AESGCMEncryptor(keyAlias: "authenticator", keyStore: keys),
            logger: logger ?? Logger(label: "test"))
    }

    @Test("conforms")
    func conforms() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await StorageClientConformance(makeClient: {
            try makeClient(directory.appending("\(UUID().uuidString).sqlite").path)
        }).run()
    }

    @Test("secrets are sealed in the file; the file is 0600 in a 0700 directory; data survives reopening")
    func sealedAtRest() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("new/authenticator.sqlite").path
        let keys = MemoryKeyStore()
        let secret = "JBSWY3DPEHPK3PXPSECRETMARKER"
        do {
            let client = try makeClient(path, keys: keys)
            client.setMechanism(mechanism: Mechanism(mechanismUUID: "m", issuer: "I", accountName: "a", type: .push,
                                                     secret: secret, challenge: "CHALLENGEMARKER"))
            client.setNotification(notification: PushNotification(messageId: "n", mechanismUUID: "m", challenge: "NOTIFYMARKER"))
            #expect(try client.integrityCheck() == ["ok"])
        }
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.appending("new").path) {
            let bytes = try Data(contentsOf: directory.appending("new/\(file)"))
            for marker in ["SECRETMARKER", "CHALLENGEMARKER", "NOTIFYMARKER"] {
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) in \(file)")
            }
        }
        #expect(try permissions(of: URL(fileURLWithPath: path)) == 0o600)
        #expect(try permissions(of: directory.appending("new")) == 0o700)
        let reopened = try makeClient(path, keys: keys)
        #expect(reopened.getMechanismForUUID(uuid: "m")?.secret == secret)
        #expect(reopened.getAllNotifications().first?.challenge == "NOTIFYMARKER")
    }

    @Test("a sealed secret copied to another row is reported, counted and left in place, never returned")
    func swappedSecret() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let logs = LogCapture()
        let client = try makeClient(path, logger: logs.logger())
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "alice", issuer: "I", accountName: "alice", type: .totp, secret: "AAAAAAAA"))
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "bob", issuer: "I", accountName: "bob", type: .totp, secret: "BBBBBBBB"))
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "UPDATE mechanism SET secret = (SELECT secret FROM mechanism WHERE mechanismUUID = 'alice') WHERE mechanismUUID = 'bob'")
        }
        #expect(client.getMechanismForUUID(uuid: "bob") == nil)
        #expect(client.getMechanismForUUID(uuid: "alice")?.secret == "AAAAAAAA")
        #expect(client.unreadableRecordCount == 1)
        #expect(client.lastError is StorageError)
        #expect(logs.all.contains { $0.level == .error && $0.text.contains("mechanism bob") })
        #expect(!logs.all.contains { $0.text.contains("AAAAAAAA") })
        let rows = try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM mechanism") }
        #expect(rows == 2, "the unreadable row is kept")
    }

    @Test("account names are read alone, in the listing's order; a row whose name is not text is counted and left, never guessed")
    func accountNames() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let client = try makeClient(path)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let accounts = [Account(issuer: "B", accountName: "x", timeAdded: start),
                        Account(issuer: "A", accountName: "y", displayIssuer: "Shown", displayAccountName: "Name", timeAdded: start.addingTimeInterval(1)),
                        Account(issuer: "C", accountName: "z", timeAdded: start.addingTimeInterval(2), policies: "{}")]
        for account in accounts { client.setAccount(account: account) }
        #expect(client.getAllAccountNames() == accounts.map(AccountNames.init))
        #expect(client.getAllAccountNames().map(\.shownIssuer) == ["B", "Shown", "C"])
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "UPDATE account SET displayAccountName = x'00ff' WHERE issuer = 'B'") }
        #expect(client.getAllAccountNames().map(\.issuer) == ["A", "C"])
        #expect(client.unreadableRecordCount == 1)
        // Damage elsewhere in a row does not hide its names: the whole read reports it.
        try queue.write { db in try db.execute(sql: "UPDATE account SET isLocked = 'yes' WHERE issuer = 'C'") }
        #expect(client.getAllAccountNames().map(\.issuer) == ["A", "C"])
        #expect(client.getAccount(accountIdentifier: accounts[2].identifier) == nil)
        #expect(client.unreadableRecordCount == 2)
    }

    @Test("an account that cannot be read whole still holds its names: a rename onto them is refused")
    func damagedAccountKeepsItsNames() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let storage = try makeClient(path)
        let client = AuthenticatorClient(storage: storage, ledger: nil)
        _ = try client.addAccount(uri: "otpauth://totp/Bank:alice?secret=JBSWY3DPEHPK3PXP&issuer=Bank")
        let other = try client.addAccount(uri: "otpauth://totp/Shop:bob?secret=KRSXG5CTMVRXEZLU&issuer=Shop")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "UPDATE account SET isLocked = 'yes' WHERE issuer = 'Bank'") }
        #expect(client.entries(matching: "Bank: alice").isEmpty, "the damaged account is not read whole")
        #expect(throws: AuthenticatorError.self, "its names are still taken") {
            try client.rename(other.account, issuer: "bank", accountName: "ALICE")
        }
        #expect(client.entries(matching: "Shop: bob").count == 1, "the refused rename changed nothing")
    }

    @Test("opening with the wrong key reads nothing and says so")
    func wrongKey() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        try makeClient(path).setMechanism(mechanism: Mechanism(mechanismUUID: "m", issuer: "I", accountName: "a", type: .totp, secret: "AAAAAAAA"))
        let other = try makeClient(path)
        #expect(other.getAllAccounts().count == 1, "accounts hold no secrets and stay readable")
        #expect(other.getMechanismForUUID(uuid: "m") == nil)
        #expect(other.unreadableRecordCount == 1)
        #expect(other.lastError.map { "\($0)" }?.contains("Could not decrypt") == true)
    }

    @Test("without the key, mechanismOutlines gives each mechanism's plain columns and no secret")
    func outlinesWithoutKey() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let client = try makeClient(path)
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "t", issuer: "I", accountName: "a", type: .totp, secret: "AAAAAAAA", digits: 8, period: 60))
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "h", issuer: "I", accountName: "b", type: .hotp, secret: "AAAAAAAA", counter: 42))
        let other = try makeClient(path)
        #expect(other.getMechanismForUUID(uuid: "t") == nil && other.keyProblem != nil, "the key is another")
        let outlines = try other.mechanismOutlines()
        #expect(outlines.map(\.mechanismUUID) == ["t", "h"])
        let totp = try #require(outlines.first)
        #expect(totp.issuer == "I" && totp.accountName == "a" && totp.type == .totp)
        #expect(totp.algorithm == "sha1" && totp.digits == 8 && totp.period == 60 && totp.counter == 0)
        #expect(outlines.last?.type == .hotp && outlines.last?.counter == 42)
        #expect(!"\(outlines)".contains("AAAAAAAA"))
    }

    @Test("removing an account that still owns records is refused; removed in order, everything goes")
    func noCascade() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let keys = MemoryKeyStore()
        let client = try makeClient(path, keys: keys)
        let push = Mechanism(mechanismUUID: "m", issuer: "I", accountName: "a", type: .push, secret: "c2VjcmV0")
        let notification = PushNotification(messageId: "n", mechanismUUID: "m", challenge: "Y2g=")
        client.setMechanism(mechanism: push)
        client.setNotification(notification: notification)
        #expect(!client.removeAccount(account: Account(issuer: "I", accountName: "a")))
        #expect(!client.removeMechanism(mechanism: push))
        #expect(client.getNotification(messageId: "n", mechanism: push) != nil)
        #expect(client.removeNotification(notification: notification))
        #expect(client.removeMechanism(mechanism: push))
        #expect(client.removeAccount(account: Account(issuer: "I", accountName: "a")))
        let fresh = try makeClient(path, keys: keys)
        #expect(fresh.isEmpty())
    }

    @Test("storeAll writes every record in one transaction, or none when one is refused")
    func storeAll() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("a.sqlite").path
        let keys = MemoryKeyStore()
        let client = try makeClient(path, keys: keys)
        let accounts = (0..<50).map { Account(issuer: "I", accountName: "user\($0)") }
        let mechanisms = accounts.map {
            Mechanism(mechanismUUID: "m-\($0.accountName)", issuer: $0.issuer, accountName: $0.accountName, type: .push, secret: "S-\($0.accountName)")
        }
        let notifications = mechanisms.map { PushNotification(messageId: "n", mechanismUUID: $0.mechanismUUID, challenge: "C-\($0.mechanismUUID)") }
        try client.storeAll(accounts: accounts, mechanisms: mechanisms, notifications: notifications)
        let reopened = try makeClient(path, keys: keys)
        #expect(reopened.getAllAccounts().count == 50)
        #expect(reopened.getMechanismForUUID(uuid: "m-user7")?.secret == "S-user7")
        #expect(reopened.getAllNotifications().map(\.challenge).sorted() == notifications.map(\.challenge).sorted())

        // A notification for a mechanism that does not exist breaks the foreign key: nothing of
        // the batch is stored, and the error reaches the caller.
        let more = [Account(issuer: "J", accountName: "new")]
        let orphan = PushNotification(messageId: "x", mechanismUUID: "no-such-mechanism", challenge: "C")
        #expect(throws: DatabaseError.self) { try client.storeAll(accounts: more, notifications: [orphan]) }
        #expect(reopened.getAccount(accountIdentifier: more[0].identifier) == nil)
        #expect(reopened.getAllAccounts().count == 50)
    }
}

/// R2: four processes add accounts to one store at once. The normal suite runs 500 operations
/// per process (COFFER_PROCESS_OPERATIONS changes it).
@Suite("SQLiteStorageClient shared by processes")
struct SQLiteProcessTests {
    static let operations = Int(ProcessInfo.processInfo.environment["COFFER_PROCESS_OPERATIONS"] ?? "") ?? 500

    @Test("four processes adding accounts to one file lose nothing")
    func processesLoseNothing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.appending("shared.sqlite").path
        let keys = directory.appending("keys").path
        let stress = try CofferProcess.builtExecutable("coffer-stress")
        try await withThrowingTaskGroup(of: (Int, Int32, String).self) { group in
            for writer in 0..<4 {
                group.addTask {
                    let result = try await CofferProcess.run(executable: stress, ["sqlite-add", database, keys, "\(writer)", "\(Self.operations)"])
                    return (writer, result.status, result.stderr)
                }
            }
            for try await (writer, status, stderr) in group { #expect(status == 0, "writer \(writer): \(stderr)") }
        }
        let client = try SQLiteStorageClient(
            path: database, encryptor: AESGCMEncryptor(keyAlias: "authenticator", keyStore: FileKeyStore(directory: URL(fileURLWithPath: keys))))
        #expect(client.getAllAccounts().count == 4 * Self.operations)
        var missing = 0
        for writer in 0..<4 {
            for index in 0..<Self.operations where client.getMechanismForUUID(uuid: "w\(writer)-\(index)") == nil {
                Issue.record("mechanism w\(writer)-\(index) is missing")
                missing += 1
            }
        }
        #expect(client.unreadableRecordCount == 0, "every process sealed with the same key")
        #expect(try client.integrityCheck() == ["ok"])
        ReliabilityReport.record("R2", "4 processes adding accounts to one SQLite store", tried: "4 × \(Self.operations) adds",
                                 outcome: "\(client.getAllAccounts().count) accounts stored, \(missing) missing, \(client.unreadableRecordCount) unreadable")
    }
}

/// R3 for sealed database fields: random damage to a mechanism's sealed secret is detected,
/// reported and counted, never returned, and the row is left as it was.
@Suite("SQLiteStorageClient under random damage to sealed fields")
struct SQLiteTamperTests {
    static let cases = (Int(ProcessInfo.processInfo.environment["COFFER_TAMPER_CASES"] ?? "") ?? 2_000) / 4

    @Test("every damaged sealed secret is refused and left in place")
    func randomDamage() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("t.sqlite").path
        let client = try SQLiteStorageClient(path: path, encryptor: AESGCMEncryptor(keyAlias: "k", keyStore: MemoryKeyStore()),
                                             logger: Logger(label: "quiet", factory: { _ in SwiftLogNoOpLogHandler() }))
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "a", issuer: "I", accountName: "a", type: .totp, secret: "AAAAAAAAAAAAAAAA"))
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "b", issuer: "I", accountName: "b", type: .totp, secret: "BBBBBBBBBBBBBBBB"))
        let queue = try DatabaseQueue(path: path)
        let (original, other) = try queue.read { db in
            (try Data.fetchOne(db, sql: "SELECT secret FROM mechanism WHERE mechanismUUID = 'a'")!,
             try Data.fetchOne(db, sql: "SELECT secret FROM mechanism WHERE mechanismUUID = 'b'")!)
        }
        var refused = 0
        for index in 0..<Self.cases {
            var damaged = original
            switch index % 4 {
            case 0: damaged[Int.random(in: 0..<damaged.count)] ^= UInt8(1 << Int.random(in: 0..<8))
            case 1: damaged = damaged.prefix(Int.random(in: 0..<damaged.count))
            case 2: damaged.append(UInt8.random(in: 0...255))
            default: damaged = other
            }
            try queue.write { try $0.execute(sql: "UPDATE mechanism SET secret = ? WHERE mechanismUUID = 'a'", arguments: [damaged]) }
            // Counted once, as one record, however often it is read.
            if client.getMechanismForUUID(uuid: "a") == nil, client.unreadableRecordCount == 1 { refused += 1 }
            let stored = try queue.read { try Data.fetchOne($0, sql: "SELECT secret FROM mechanism WHERE mechanismUUID = 'a'") }
            #expect(stored == damaged, "case \(index): the row must be left as it was")
        }
        #expect(refused == Self.cases)
        ReliabilityReport.record("R3", "bit flips, truncations, extensions, replacements, swaps: sealed SQLite fields",
                                 tried: "\(Self.cases) damaged fields", outcome: "\(refused) refused and counted, rows left as they were")
        #expect(client.getMechanismForUUID(uuid: "b")?.secret == "BBBBBBBBBBBBBBBB")
    }
}
