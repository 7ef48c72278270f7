import CofferOath
import CofferPostgres
import CofferPostgresAuthenticator
import CofferPush
import CofferStorage
import Crypto
import Foundation
import GRDB
import Logging
import PostgresNIO

/// P9 and P10: Ping's storages (issue 21).
///
/// - P9: `SQLiteOathStorage` at 10,000 credentials. `retrieveOathCredential` beside the floor of
///   the same work done bare: a GRDB read of the same row and an AES-GCM open of a sealed value
///   of the same size; `getAllOathCredentials` against a target.
/// - P10: `SQLitePushStorage` and `PostgresPushStorage` at 1,000,000 notifications:
///   `getPendingPushNotifications`, `getNotificationByMessageId` and a count purge of one
///   credential. The haystack is made in SQL (copies of one sealed row under 5,000 credentials,
///   long expired, most not pending); the notifications looked up are stored through the API, so
///   every one that is read opens. The keychain storage beside them at 1,000.
struct PingStorageBenchmark {
    var directory: URL
    var quick: Bool
    var postgres: String?
    var keychainNotifications: Int?
    /// `OathKeychainStorage`'s size in P9 (`nil`: not measured).
    var keychainCredentials: Int?
    let logger = Logger(label: "bench.ping")

    var credentials: Int { quick ? 500 : 10_000 }
    var notifications: Int { quick ? 20_000 : 1_000_000 }
    var lookups: Int { quick ? 30 : 300 }

    // MARK: - P9

    func runOath(into report: Report) async throws {
        let path = directory.appendingPathComponent("ping-oath.sqlite").path
        let storage = try SQLiteOathStorage(path: path, encryptor: AESGCMEncryptor(keyAlias: "bench", keyStore: MemoryKeyStore()))
        for index in 0..<credentials {
            try await storage.storeOathCredential(OathCredential(
                id: "oath-\(index)", issuer: "Issuer \(index % 97)", accountName: "user\(index)@example.com", oathType: index % 3 == 0 ? .hotp : .totp,
                secretKey: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"))
        }
        let label = "SQLiteOathStorage at \(Format.count(credentials)) credentials"
        // The floor: the same row read bare, and an AES-GCM open of a sealed value of the same size.
        let bare = try DatabaseQueue(path: path)
        let key = SymmetricKey(size: .bits256)
        let sealed = try await bare.read { try Data.fetchOne($0, sql: "SELECT secret FROM mfa_oath_data LIMIT 1") ?? Data() }
        let box = try AES.GCM.seal(Data(count: max(sealed.count - 28, 1)), using: key)
        var random = SystemRandomNumberGenerator()
        let ids = (0..<lookups).map { _ in "oath-\(Int.random(in: 0..<credentials, using: &random))" }
        let (retrieve, floor) = try await measureAlternating(SamplePlan(warmup: 20, samples: lookups, batch: 1)) { index in
            guard try await storage.retrieveOathCredential(credentialId: ids[index % ids.count]) != nil else { throw BenchFailure("P9: not found") }
        } reference: { index in
            let id = ids[index % ids.count]
            let row = try await bare.read { try GRDB.Row.fetchOne($0, sql: "SELECT * FROM mfa_oath_data WHERE id = ?", arguments: [id]).map { $0["secret"] as Data } }
            guard row != nil else { throw BenchFailure("P9: bare read found nothing") }
            _ = try AES.GCM.open(box, using: key)
        }
        report.add(Row(id: "P9", measurement: "\(label): retrieveOathCredential", coffer: retrieve, referenceName: "GRDB read + AES-GCM open",
                       reference: floor, target: .ratioAtMost(1.3)))
        let all = try await measureEachAsync(count: quick ? 3 : 10) {
            guard try await storage.getAllOathCredentials().count == credentials else { throw BenchFailure("P9: a listing lost credentials") }
        }
        report.add(Row(id: "P9", measurement: "\(label): getAllOathCredentials", coffer: all, target: .medianAtMost(30_000_000)))
        if let keychainCredentials { try await runOathKeychain(credentials: keychainCredentials, into: report) }
    }

    /// `OathKeychainStorage` at `credentials`, stored through the API (each store rewrites the
    /// one sealed item that holds them all, and gnome-keyring its whole file).
    private func runOathKeychain(credentials: Int, into report: Report) async throws {
        let storage = OathKeychainStorage(service: "org.coffer.bench.oath.\(UUID().uuidString.prefix(8))", timeout: .seconds(120))
        for index in 0..<credentials {
            try await storage.storeOathCredential(OathCredential(
                id: "oath-\(index)", issuer: "Issuer \(index % 97)", accountName: "user\(index)@example.com", oathType: index % 3 == 0 ? .hotp : .totp,
                secretKey: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"))
        }
        let label = "OathKeychainStorage at \(Format.count(credentials)) credentials"
        let count = quick ? 3 : 20
        let all = try await measureEachAsync(count: count) {
            guard try await storage.getAllOathCredentials().count == credentials else { throw BenchFailure("P9: a keyring listing lost credentials") }
        }
        report.add(Row(id: "P9", measurement: "\(label): getAllOathCredentials", coffer: all, target: .medianAtMost(50_000_000)))
        var random = SystemRandomNumberGenerator()
        let retrieve = try await measureEachAsync(count: count) {
            let id = "oath-\(Int.random(in: 0..<credentials, using: &random))"
            guard try await storage.retrieveOathCredential(credentialId: id) != nil else { throw BenchFailure("P9: \(id) not found on the keyring") }
        }
        report.add(Row(id: "P9", measurement: "\(label): retrieveOathCredential", coffer: retrieve, target: .medianAtMost(50_000_000)))
        let update = try await measureEachAsync(count: count) {
            guard try await storage.updateOathCredential(credentialId: "oath-0", { credential in
                var next = credential
                next.counter += 1
                return next
            }) != nil else {
                throw BenchFailure("P9: oath-0 not found on the keyring")
            }
        }
        report.add(Row(id: "P9", measurement: "\(label): updateOathCredential (a HOTP code's counter)", coffer: update))
        try await storage.clearOathCredentials()
    }

    // MARK: - P10

    /// What the lookups of one push storage need: the storage and how to fill its haystack in SQL.
    struct PushSubject {
        let label: String
        let storage: any PushStorage
        /// Copies `count` rows of the stored notification `template` under 5,000 credentials.
        let fill: (_ count: Int) async throws -> Void
    }

    func runPush(into report: Report) async throws {
        let path = directory.appendingPathComponent("ping-push.sqlite").path
        let sqlite = try SQLitePushStorage(path: path, encryptor: AESGCMEncryptor(keyAlias: "bench", keyStore: MemoryKeyStore()))
        try await measurePush(PushSubject(label: "SQLitePushStorage", storage: sqlite) { count in
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(sql: """
                    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
                    INSERT INTO mfa_push_notifications (id, credential_id, message_id, message_text, challenge, push_type, ttl, pending,
                        approved, created_at)
                    SELECT 'hay-' || i, 'cred-' || (i % 5000), 'hay-message-' || i, 'Sign in?',
                        (SELECT challenge FROM mfa_push_notifications WHERE id = 'template'), 'challenge', 120, i % 10 = 0, 0, 100000 + i
                    FROM n
                    """, arguments: [count])
            }
        }, into: report)
        if let postgres {
            try await withPostgres(postgres) { database, client in
                try await measurePush(PushSubject(label: "PostgresPushStorage", storage: PostgresPushStorage(database: database, owner: "bench")) { count in
                    _ = try await client.query("""
                        INSERT INTO coffer_push_notifications (owner, id, credential_id, message_id, message_text, challenge, push_type, ttl,
                            pending, approved, created_at)
                        SELECT 'bench', 'hay-' || i, 'cred-' || (i % 5000), 'hay-message-' || i, 'Sign in?',
                            (SELECT challenge FROM coffer_push_notifications WHERE owner = 'bench' AND id = 'template'), 'challenge', 120,
                            i % 10 = 0, false, 100000 + i
                        FROM generate_series(0, \(count - 1)) AS i
                        """, logger: logger).collect()
                    _ = try await client.query("VACUUM ANALYZE coffer_push_notifications", logger: logger).collect()
                }, into: report)
            }
        }
        if let keychainNotifications {
            let service = "org.coffer.bench.push.\(UUID().uuidString.prefix(8))"
            let keychain = PushKeychainStorage(credentialService: service + ".credentials", notificationService: service + ".notifications",
                                               tokenService: service + ".tokens", timeout: .seconds(120))
            try await measurePush(PushSubject(label: "PushKeychainStorage", storage: keychain) { count in
                for index in 0..<count {
                    try await keychain.storePushNotification(PushNotification(
                        id: "hay-\(index)", credentialId: "cred-\(index % 10)", ttl: 120, messageId: "hay-message-\(index)", challenge: "Y2hhbGxlbmdl",
                        pushType: .challenge, createdAt: Date(timeIntervalSinceReferenceDate: 100_000 + Double(index)), pending: index % 10 == 0))
                }
            }, haystack: keychainNotifications, into: report)
            try await keychain.clearPushNotifications()
        }
    }

    /// Stores the template and 5 live notifications through the API, fills the haystack, then
    /// times the lookups and the purge.
    private func measurePush(_ subject: PushSubject, haystack: Int? = nil, into report: Report) async throws {
        let storage = subject.storage
        let size = haystack ?? notifications
        try await storage.storePushNotification(PushNotification(id: "template", credentialId: "template", ttl: 120, messageId: "template",
                                                                 challenge: "Y2hhbGxlbmdl", pushType: .challenge,
                                                                 createdAt: Date(timeIntervalSinceReferenceDate: 1), pending: false))
        try await subject.fill(size)
        for index in 0..<5 {
            try await storage.storePushNotification(PushNotification(id: "live-\(index)", credentialId: "live", ttl: 3_600, messageId: "live-message-\(index)",
                                                                     challenge: "Y2hhbGxlbmdl", loadBalancer: "amlb=1", pushType: .challenge))
        }
        let label = "\(subject.label) at \(Format.count(size + 6)) notifications"
        let count = quick ? 10 : lookups
        let pending = try await measureEachAsync(count: count) {
            guard try await storage.getPendingPushNotifications().count == 5 else { throw BenchFailure("P10: pending notifications are not the 5 live ones") }
        }
        report.add(Row(id: "P10", measurement: "\(label): getPendingPushNotifications (5 pending, 10% of the rest pending but expired)",
                       coffer: pending, target: .medianAtMost(haystack == nil ? 1_000_000 : 50_000_000)))
        var random = SystemRandomNumberGenerator()
        let byMessage = try await measureEachAsync(count: count) {
            let id = "live-message-\(Int.random(in: 0..<5, using: &random))"
            guard try await storage.getNotificationByMessageId(messageId: id)?.challenge == "Y2hhbGxlbmdl" else { throw BenchFailure("P10: \(id) not found") }
        }
        report.add(Row(id: "P10", measurement: "\(label): getNotificationByMessageId", coffer: byMessage,
                       target: haystack == nil ? .medianAtMost(1_000_000) : .none))
        let credentials = haystack == nil ? 5_000 : 10
        var next = 0
        let purge = try await measureEachAsync(count: min(count, credentials - 3)) {  // three warm-up purges first
            let id = "cred-\(next)"
            next += 1
            let kept = size / credentials
            let removed = try await storage.purgePushNotificationsByCount(maxCount: max(kept / 2, 1), credentialId: id)
            guard removed > 0 else { throw BenchFailure("P10: the purge of \(id) removed nothing") }
        }
        report.add(Row(id: "P10", measurement: "\(label): purgePushNotificationsByCount(maxCount: \(size / credentials / 2), credentialId:)",
                       coffer: purge, target: .medianAtMost(haystack == nil ? 10_000_000 : 500_000_000)))
    }

    /// A fresh PostgreSQL database for `adminURL`'s server, migrated, with a bare client beside it.
    private func withPostgres(_ adminURL: String, _ body: (CofferDatabase, PostgresClient) async throws -> Void) async throws {
        let helper = PostgresBenchmark(adminURL: adminURL, quick: quick, wanted: [])
        let url = try await helper.freshDatabase()
        var options = CofferDatabase.Configuration.Options()
        options.operationTimeout = .seconds(120)
        options.listensForChanges = false
        let database = try CofferDatabase(configuration: .init(url: url, keyEncryptionKey: helper.kek, options: options), logger: logger)
        let client = PostgresClient(configuration: try helper.bareConfiguration(url), backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await database.run() }
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await database.migrate()
            try await body(database, client)
        }
    }
}

/// Times `body` once per call, `count` times, after three untimed calls.
func measureEachAsync(count: Int, warmup: Int = 3, _ body: () async throws -> Void) async throws -> Timings {
    for _ in 0..<warmup { try await body() }
    var timings = Timings()
    for _ in 0..<count { timings.append(try await Clock.time { try await body() }) }
    return timings
}
