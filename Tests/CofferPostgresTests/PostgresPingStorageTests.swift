import CofferAuthenticator
import CofferAuthMigration
import CofferOath
import CofferPostgres
import CofferPostgresAuthenticator
import CofferPush
import CofferStorage
import CofferStorageTesting
import CofferAuthenticatorTesting
import Foundation
import Synchronization
import TestSupport
import Testing

/// Issue 21: Ping's `OathStorage` and `PushStorage` on PostgreSQL, owner-scoped.
@Suite("PostgresOathStorage and PostgresPushStorage", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct PostgresPingStorageTests {
    static let secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
    static let sharedSecret = "b3VyIHNoYXJlZCBzZWNyZXQgb2YgMzIgYnl0ZXMhIQ=="
    static let challenge = "Y2hhbGxlbmdlLXRoYXQtbXVzdC1ub3QtbGVhaw=="

    /// Names for the owners the kits' checks get, one each.
    final class Owners: Sendable {
        private let next = Mutex(0)
        func make() -> String { next.withLock { $0 += 1; return "owner-\($0)" } }
    }

    @Test("both conform, cascade included: an owner per check, on the shared key ring and on an owner's own")
    func conform() async throws {
        try await TestPostgres.withDatabase { database, _ in
            let owners = Owners()
            try await OathStorageConformance(makeStorage: { PostgresOathStorage(database: database, owner: owners.make()) }).run()
            try await PushStorageConformance(makeStorage: { PostgresPushStorage(database: database, owner: owners.make()) }).run()
            let kek = KeyEncryptionKey.random()
            try await OathStorageConformance(makeStorage: {
                try PostgresOathStorage(database: database, owner: owners.make(), keyEncryptionKey: kek)
            }).run()
            try await PushStorageConformance(makeStorage: {
                try PostgresPushStorage(database: database, owner: owners.make(), keyEncryptionKey: kek)
            }).run()
        }
    }

    @Test("a second owner sees nothing and changes nothing of the first's; a row moved to them does not open")
    func ownersApart() async throws {
        try await TestPostgres.withDatabase { database, url in
            let alice = (oath: PostgresOathStorage(database: database, owner: "alice"), push: PostgresPushStorage(database: database, owner: "alice"))
            let bob = (oath: PostgresOathStorage(database: database, owner: "bob"), push: PostgresPushStorage(database: database, owner: "bob"))
            try await alice.oath.storeOathCredential(OathCredential(id: "c", issuer: "Bank", accountName: "alice", oathType: .hotp, secretKey: Self.secret))
            try await alice.push.storePushCredential(PushCredential(id: "p", issuer: "AM", accountName: "alice",
                                                                    serverEndpoint: "https://am.example.com/push", sharedSecret: Self.sharedSecret))
            try await alice.push.storePushNotification(PushNotification(id: "n", credentialId: "p", ttl: 600, messageId: "m",
                                                                        challenge: Self.challenge, pushType: .default))
            try await alice.push.storePushDeviceToken(PushDeviceToken(token: "alice-device-token"))

            #expect(try await bob.oath.getAllOathCredentials().isEmpty)
            #expect(try await bob.oath.retrieveOathCredential(credentialId: "c") == nil)
            #expect(try await bob.oath.removeOathCredential(credentialId: "c") == false)
            try await bob.oath.clearOathCredentials()
            #expect(try await bob.push.getAllPushCredentials().isEmpty)
            #expect(try await bob.push.getAllPushNotifications().isEmpty)
            #expect(try await bob.push.getNotificationByMessageId(messageId: "m") == nil)
            #expect(try await bob.push.getCurrentPushDeviceToken() == nil)
            #expect(try await bob.push.countPushNotifications(credentialId: nil) == 0)
            #expect(try await bob.push.purgePushNotificationsByCount(maxCount: 0, credentialId: nil) == 0)
            #expect(try await bob.push.removePushCredential(credentialId: "p") == false)
            try await bob.push.clearPushCredentials()
            try await bob.push.clearPushDeviceTokens()
            #expect(try await alice.oath.retrieveOathCredential(credentialId: "c")?.secret == Self.secret)
            #expect(try await alice.push.retrievePushNotification(notificationId: "n")?.challenge == Self.challenge)
            #expect(try await alice.push.getCurrentPushDeviceToken()?.token == "alice-device-token")

            // Alice's rows handed to Bob by someone with the database: sealed to Alice, they do not open as Bob's.
            try await TestPostgres.psql(url, "UPDATE coffer_oath_credentials SET owner = 'bob'; UPDATE coffer_push_credentials SET owner = 'bob'")
            await Self.expectCorrupted { try await bob.oath.retrieveOathCredential(credentialId: "c") }
            #expect(try await bob.oath.getAllOathCredentials().isEmpty, "a listing skips the row")
            await #expect(throws: PushStorageError.self) { try await bob.push.retrievePushCredential(credentialId: "p") }
            try await TestPostgres.psql(url, "UPDATE coffer_oath_credentials SET owner = 'alice'; UPDATE coffer_push_credentials SET owner = 'alice'")
            #expect(try await alice.oath.retrieveOathCredential(credentialId: "c")?.secret == Self.secret, "back with Alice, it opens")
        }
    }

    @Test("with Alice's name and a key-encryption key of his own, Mallory opens nothing and writes nothing")
    func ownKeyRings() async throws {
        try await TestPostgres.withDatabase { database, url in
            let alice = try PostgresOathStorage(database: database, owner: "alice", keyEncryptionKey: .random())
            try await alice.storeOathCredential(OathCredential(id: "c", issuer: "Bank", accountName: "alice", oathType: .totp, secretKey: Self.secret))
            let mallory = try PostgresOathStorage(database: database, owner: "alice", keyEncryptionKey: .random())
            let before = try await TestPostgres.psql(url, "SELECT md5(string_agg(row(o.*)::text, '|')) FROM coffer_oath_credentials o")
            for attempt in ["read", "list", "store", "remove", "clear"] {
                do {
                    switch attempt {
                    case "read": _ = try await mallory.retrieveOathCredential(credentialId: "c")
                    case "list": _ = try await mallory.getAllOathCredentials()
                    case "store": try await mallory.storeOathCredential(OathCredential(id: "c", issuer: "Evil", accountName: "a", oathType: .totp, secretKey: Self.secret))
                    case "remove": _ = try await mallory.removeOathCredential(credentialId: "c")
                    default: try await mallory.clearOathCredentials()
                    }
                    Issue.record("\(attempt) succeeded with another key-encryption key")
                } catch let error as OathStorageError {
                    guard case .storageFailure(_, let cause) = error, (cause as? PostgresStorageError)?.code == .wrongKeyEncryptionKey else {
                        Issue.record("\(attempt): \(error)"); continue
                    }
                }
            }
            #expect(try await TestPostgres.psql(url, "SELECT md5(string_agg(row(o.*)::text, '|')) FROM coffer_oath_credentials o") == before)
            #expect(try await alice.retrieveOathCredential(credentialId: "c")?.issuer == "Bank")
        }
    }

    @Test("a database role other than the tables' owner sees and writes only rows of its own name (row-level security)")
    func rowLevelSecurity() async throws {
        let url = try await TestPostgres.freshDatabase()
        let mallory = "mallory_\(UUID().uuidString.prefix(8).lowercased())"
        try await TestPostgres.running(try TestPostgres.database(url)) { database in
            try await PostgresOathStorage(database: database, owner: "alice").storeOathCredential(
                OathCredential(id: "c", issuer: "Bank", accountName: "alice", oathType: .totp, secretKey: Self.secret))
            try await PostgresPushStorage(database: database, owner: "alice").storePushNotification(
                PushNotification(id: "n", credentialId: "p", ttl: 600, messageId: "m", challenge: Self.challenge, pushType: .default))
        }
        try await TestPostgres.psql(url, """
            CREATE ROLE \(mallory) LOGIN; GRANT SELECT ON coffer_schema TO \(mallory);
            GRANT SELECT, INSERT, UPDATE, DELETE ON coffer_keys, coffer_oath_credentials, coffer_push_credentials,
                coffer_push_notifications, coffer_push_device_tokens TO \(mallory)
            """)
        let malloryURL = url.replacingOccurrences(of: "postgres@", with: "\(mallory)@")
        try await TestPostgres.running(try TestPostgres.database(malloryURL), migrate: false) { database in
            let oath = PostgresOathStorage(database: database, owner: "alice"), push = PostgresPushStorage(database: database, owner: "alice")
            #expect(try await oath.getAllOathCredentials().isEmpty)
            #expect(try await push.getAllPushNotifications().isEmpty)
            #expect(try await push.purgePushNotificationsByCount(maxCount: 0, credentialId: nil) == 0)
            do {
                try await oath.storeOathCredential(OathCredential(id: "c", issuer: "Evil", accountName: "a", oathType: .totp, secretKey: Self.secret))
                Issue.record("a row in Alice's name was written by another role")
            } catch let error as OathStorageError {
                guard case .storageFailure(_, let cause) = error else { Issue.record("\(error)"); return }
                #expect((cause as? PostgresStorageError)?.sqlState == "42501", "\(error)")
            }
            // Under its own name, the role works as usual.
            let own = PostgresOathStorage(database: database, owner: mallory)
            try await own.storeOathCredential(OathCredential(id: "m", issuer: "Mine", accountName: "m", oathType: .totp, secretKey: Self.secret))
            #expect(try await own.getAllOathCredentials().map(\.id) == ["m"])
        }
        #expect(try await TestPostgres.psql(url, "SELECT issuer FROM coffer_oath_credentials WHERE owner = 'alice'") == "Bank")
        #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_push_notifications") == "1")
    }

    @Test("secrets, challenges, cookies and tokens are sealed in the rows; a secret swapped, a counter rolled back or an issuer changed does not open")
    func sealedAndBound() async throws {
        try await TestPostgres.withDatabase { database, url in
            let oath = PostgresOathStorage(database: database, owner: "alice"), push = PostgresPushStorage(database: database, owner: "alice")
            let client = try await OathClient.createClient { $0.storage = oath }
            let hotp = try await client.addCredentialFromUri("otpauth://hotp/Bank:alice?secret=\(Self.secret)")
            try await oath.storeOathCredential(OathCredential(id: "other", issuer: "Shop", accountName: "alice", oathType: .totp,
                                                              secretKey: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"))
            try await push.storePushCredential(PushCredential(id: "p", issuer: "AM", accountName: "alice",
                                                              serverEndpoint: "https://am.example.com/push", sharedSecret: Self.sharedSecret))
            try await push.storePushNotification(PushNotification(id: "n", credentialId: "p", ttl: 600, messageId: "m",
                                                                  challenge: Self.challenge, loadBalancer: "amlb=cookie-value", pushType: .default))
            try await push.storePushDeviceToken(PushDeviceToken(token: "device-token-value"))
            let dumped = try await TestPostgres.psql(url, """
                SELECT string_agg(t, '') FROM (SELECT row(o.*)::text AS t FROM coffer_oath_credentials o
                  UNION ALL SELECT row(c.*)::text FROM coffer_push_credentials c UNION ALL SELECT row(n.*)::text FROM coffer_push_notifications n
                  UNION ALL SELECT row(d.*)::text FROM coffer_push_device_tokens d) rows
                """)
            for plain in [Self.secret, Self.sharedSecret, Self.challenge, "cookie-value", "device-token-value"] {
                let hex = Data(plain.utf8).map { String(format: "%02x", $0) }.joined()
                #expect(!dumped.contains(plain) && !dumped.contains(hex), "\(plain) is in a row in the clear")
            }

            _ = try await client.generateCode(hotp.id)
            try await TestPostgres.psql(url, "UPDATE coffer_oath_credentials SET counter = 0 WHERE id = '\(hotp.id)'")
            await Self.expectCorrupted { try await oath.retrieveOathCredential(credentialId: hotp.id) }
            await #expect(throws: (any Error).self, "no code from a rolled-back counter") { try await client.generateCode(hotp.id) }
            try await TestPostgres.psql(url, "UPDATE coffer_oath_credentials SET counter = 1 WHERE id = '\(hotp.id)'")
            #expect(try await client.generateCode(hotp.id) == (try OathGenerator.hotp(secret: Base32.decode(Self.secret), counter: 1)),
                    "the counter as it was: it opens and moves on")
            try await TestPostgres.psql(url, "UPDATE coffer_oath_credentials SET issuer = 'Evil' WHERE id = 'other'")
            await Self.expectCorrupted { try await oath.retrieveOathCredential(credentialId: "other") }
            try await TestPostgres.psql(url, """
                UPDATE coffer_oath_credentials SET issuer = 'Shop', secret = (SELECT secret FROM coffer_oath_credentials WHERE id = '\(hotp.id)')
                WHERE id = 'other'
                """)
            await Self.expectCorrupted { try await oath.retrieveOathCredential(credentialId: "other") }
            #expect(try await oath.getAllOathCredentials().map(\.id) == [hotp.id], "a listing skips the damaged row")
            try await TestPostgres.psql(url, "UPDATE coffer_push_credentials SET server_endpoint = 'https://evil.example.com/push'")
            await #expect(throws: PushStorageError.self) { try await push.retrievePushCredential(credentialId: "p") }
            try await TestPostgres.psql(url, "UPDATE coffer_push_notifications SET message_id = 'other'")
            await #expect(throws: PushStorageError.self) { try await push.retrievePushNotification(notificationId: "n") }
        }
    }

    @Test("4 processes × 50 HOTP codes of one credential through OathClient: 200 distinct counters, the counter at 200")
    func fourProcesses() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let kekPath = directory.appending("postgres.kek").path
        let kek = try KeyEncryptionKey.create(atFile: kekPath)
        let url = try await TestPostgres.freshDatabase()
        let id = try await TestPostgres.running(try TestPostgres.database(url, kek: kek)) { database in
            let client = try await OathClient.createClient { $0.storage = PostgresOathStorage(database: database, owner: "alice") }
            return try await client.addCredentialFromUri("otpauth://hotp/Race:alice?secret=\(Self.secret)").id
        }
        let run = try await CofferProcess.stressAtOnce(["oath-hotp-postgres", url, kekPath, "alice", id, "50"])
        #expect(run.allSucceeded, "\(run.failures)")
        #expect(run.numbers.sorted() == Array(1...200), "each code's counter after it, every one once: \(Set(run.numbers).count) distinct of \(run.numbers.count)")
        #expect(try await TestPostgres.psql(url, "SELECT counter FROM coffer_oath_credentials") == "200")
    }

    @Test("a count purge racing new notifications deletes none of the new ones; two instances storing tokens leave one current")
    func purgeRacesWriters() async throws {
        try await TestPostgres.withDatabase { database, url in
            let storage = PostgresPushStorage(database: database, owner: "alice")
            let old = Date().addingTimeInterval(-86_400)
            for index in 0..<400 {
                try await storage.storePushNotification(PushNotification(
                    id: String(format: "old-%04d", index), credentialId: "p", ttl: 600, messageId: "old-\(index)",
                    challenge: Self.challenge, pushType: .default, createdAt: old.addingTimeInterval(Double(index))))
            }
            let fresh = (0..<100).map { "new-\($0)" }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for id in fresh {
                        try await storage.storePushNotification(PushNotification(id: id, credentialId: "p", ttl: 600, messageId: id,
                                                                                 challenge: Self.challenge, pushType: .default))
                    }
                }
                group.addTask {
                    // Each purge keeps the newest 150: never a new one, whenever it was stored.
                    for _ in 0..<20 { _ = try await storage.purgePushNotificationsByCount(maxCount: 150, credentialId: "p") }
                }
                try await group.waitForAll()
            }
            let kept = Set(try await storage.getAllPushNotifications().map(\.id))
            #expect(fresh.allSatisfy(kept.contains), "\(fresh.filter { !kept.contains($0) }.count) new notifications were purged")
            #expect(try await storage.purgePushNotificationsByCount(maxCount: 150, credentialId: "p") == kept.count - 150)

            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await PostgresPushStorage(database: database, owner: "alice").storePushDeviceToken(PushDeviceToken(token: "token-\(index)"))
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_push_device_tokens WHERE is_current") == "1")
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_push_device_tokens") == "8")
            #expect(try await storage.getCurrentPushDeviceToken()?.token.hasPrefix("token-") == true)
        }
    }

    @Test("a legacy PostgresStorageClient owner moves into PostgresOathStorage and PostgresPushStorage in one call, once")
    func migratesFromLegacy() async throws {
        try await TestPostgres.withDatabase { database, _ in
            let legacy = PostgresStorageClient(database: database, owner: "alice")
            try await legacy.insert(Mechanism(mechanismUUID: "hotp-1", issuer: "Bank", accountName: "alice", type: .hotp, secret: Self.secret, counter: 3))
            let pushMechanism = Mechanism(mechanismUUID: "push-1", issuer: "AM", accountName: "alice", type: .push, secret: Self.sharedSecret,
                                          authenticationEndpoint: URL(string: "https://am.example.com/push?_action=authenticate"))
            try await legacy.insert(pushMechanism)
            try await legacy.save(CofferAuthenticator.PushNotification(messageId: "m1", mechanismUUID: "push-1", challenge: Self.challenge))
            try await legacy.save(CofferAuthenticator.PushDeviceToken(tokenId: "device-token"))
            let oath = PostgresOathStorage(database: database, owner: "alice"), push = PostgresPushStorage(database: database, owner: "alice")
            let report = try await AuthMigration.move(from: legacy, oath: oath, push: push, sourceName: "postgres")
            #expect(report == AuthMigration.Report(oathCredentials: 1, pushCredentials: 1, notifications: 1, pushDeviceToken: true))
            let left = try await legacy.recordCounts()
            #expect(left.accounts == 0 && left.mechanisms == 0 && left.notifications == 0, "the legacy owner let go of everything")
            #expect(try await oath.retrieveOathCredential(credentialId: "hotp-1")?.counter == 3)
            #expect(try await push.getNotificationByMessageId(messageId: "m1")?.challenge == Self.challenge)
            #expect(try await push.getCurrentPushDeviceToken()?.token == "device-token")
            #expect(try await AuthMigration.move(from: legacy, oath: oath, push: push, sourceName: "postgres") == AuthMigration.Report())
            #expect(try await oath.getAllOathCredentials().count == 1)
        }
    }

    @Test("the article's example: each user's storages over one database, apart")
    func articleExample() async throws {
        try await TestPostgres.withDatabase { database, _ in
            for userID in ["alice", "bob"] {
                let oath = PostgresOathStorage(database: database, owner: userID)
                let push = PostgresPushStorage(database: database, owner: userID)
                try await oath.storeOathCredential(OathCredential(id: "c", issuer: userID, accountName: userID, oathType: .totp, secretKey: Self.secret))
                try await push.storePushDeviceToken(PushDeviceToken(token: "token-of-\(userID)"))
            }
            #expect(try await PostgresOathStorage(database: database, owner: "alice").retrieveOathCredential(credentialId: "c")?.issuer == "alice")
            #expect(try await PostgresPushStorage(database: database, owner: "bob").getCurrentPushDeviceToken()?.token == "token-of-bob")
        }
    }

    static func expectCorrupted(_ body: () async throws -> OathCredential?) async {
        do {
            _ = try await body()
            Issue.record("a tampered row opened")
        } catch let error as OathStorageError {
            guard case .storageCorrupted = error else { Issue.record("\(error)"); return }
        } catch {
            Issue.record("untyped: \(error)")
        }
    }
}
