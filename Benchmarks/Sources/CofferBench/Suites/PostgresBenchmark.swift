import CofferAuthenticator
import CofferPostgres
import CofferPostgresAuthenticator
import CofferStorage
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// P7 and P8: the PostgreSQL backends against postgres-nio's bare `PostgresClient` running the
/// same SQL on the same server in the same run.
///
/// - P7: 64 tasks doing save-then-get of a ~1 KiB value, through `PostgresStorage` (JSON,
///   sealing, the key-ring check, a transaction per write) and through a bare client (the same
///   statements, the same bytes unsealed). Reported as time per operation (wall time over
///   operations), so "≥ 0.8× the floor's operations per second" reads "≤ 1.25× its time".
/// - P8: `get` among 1,000,000 stored values, one caller at a time; and every
///   `PostgresStorageClient` lookup at 10k accounts / 30k mechanisms / 1M notifications.
struct PostgresBenchmark {
    /// A URL of the server's maintenance database; the benchmark makes a database of its own.
    var adminURL: String
    var quick: Bool
    var wanted: Set<String>
    let logger = Logger(label: "bench.postgres")
    /// The key-encryption key of the run (the seeding instances and the measured one share it).
    let kek = KeyEncryptionKey.random()

    func run(into report: Report) async throws {
        let url = try await freshDatabase()
        var options = CofferDatabase.Configuration.Options()
        options.operationTimeout = .seconds(60)
        let database = try CofferDatabase(configuration: .init(url: url, keyEncryptionKey: kek, options: options), logger: logger)
        var floorConfiguration = try bareConfiguration(url)
        floorConfiguration.options.maximumConnections = options.maximumConnections
        let floor = PostgresClient(configuration: floorConfiguration, backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await database.run() }
            group.addTask { await floor.run() }
            defer { group.cancelAll() }
            try await database.migrate()
            if wanted.contains("P7") { try await throughput(database, floor, into: report) }
            if wanted.contains("P8") {
                try await values(database, floor, url: url, into: report)
                try await records(database, floor, url: url, into: report)
            }
        }
    }

    // MARK: - P7

    func throughput(_ database: CofferDatabase, _ floor: PostgresClient, into report: Report) async throws {
        let tasks = 64, rounds = quick ? 1 : 3, perTask = quick ? 10 : 100
        let storages = (0..<tasks).map { PostgresStorage<Credential>(database: database, namespace: "p7", key: "task\($0)") }
        let bytes = try (0..<tasks).map { try JSONEncoder().encode(Credential.sample($0)) }
        try await storages[0].save(item: Credential.sample(0))  // the key ring's first key
        let keyID = try await database.keys.primaryKey(for: storages[0].encryptor.keyAlias)!.id
        let alias = storages[0].encryptor.keyAlias

        func timed(_ operation: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
            let elapsed = try await Clock.time {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for task in 0..<tasks { group.addTask { for _ in 0..<perTask { try await operation(task) } } }
                    try await group.waitForAll()
                }
            }
            return elapsed / Double(tasks * perTask * 2)  // a save and a get each
        }
        let logger = logger
        let coffer: @Sendable (Int) async throws -> Void = { task in
            try await storages[task].save(item: Credential.sample(task))
            guard try await storages[task].get() != nil else { throw BenchFailure("P7: a saved value was not read back") }
        }
        // The same statements as PostgresStorage's, on the same bytes unsealed.
        let bare: @Sendable (Bool, Int) async throws -> Void = { inTransaction, task in
            let save: PostgresQuery = try """
                WITH newest AS (SELECT coalesce(max(id), 0) AS id FROM coffer_keys WHERE alias = \(alias)),
                saved AS (
                    INSERT INTO coffer_values (namespace, key, value) SELECT 'floor', \("task\(task)"), \(bytes[task]) FROM newest WHERE id = \(Int(keyID))
                    ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = now()
                    RETURNING 1)
                SELECT pg_notify('coffer_changes', \("[\"value\",\"floor\",\"task\(task)\"]")) FROM saved
                """
            if inTransaction {
                _ = try await floor.withTransaction(logger: logger) { try await $0.query(save, logger: logger).collect() }
            } else {
                _ = try await floor.query(save, logger: logger).collect()
            }
            let rows = try await floor.query("SELECT value FROM coffer_values WHERE namespace = 'floor' AND key = \("task\(task)")", logger: logger).collect()
            guard rows.count == 1 else { throw BenchFailure("P7: the floor's value was not read back") }
        }
        var cofferTimes = Timings(), floorTimes = Timings(), autocommitTimes = Timings()
        _ = try await timed(coffer)  // warm-up: connections, key caches
        _ = try await timed { try await bare(true, $0) }
        for _ in 0..<rounds {
            cofferTimes.append(try await timed(coffer))
            floorTimes.append(try await timed { try await bare(true, $0) })
            autocommitTimes.append(try await timed { try await bare(false, $0) })
        }
        func perSecond(_ timings: Timings) -> String { Format.count(Int(1e9 / timings.median)) + " ops/s" }
        report.add(Row(id: "P7", measurement: "PostgresStorage, 64 tasks save+get 1 KiB (wall time per op)", coffer: cofferTimes,
                       referenceName: "same SQL, bare PostgresClient", reference: floorTimes, target: .ratioAtMost(1.1),
                       note: "\(perSecond(cofferTimes)) vs \(perSecond(floorTimes)); ≤ 1.25× the time is ≥ 0.8× the operations per second"))
        report.add(Row(id: "P7", measurement: "floor: the save in BEGIN/COMMIT vs autocommit (the cost of a durable acknowledgement)",
                       coffer: floorTimes, referenceName: "the same, autocommit", reference: autocommitTimes,
                       note: "\(perSecond(autocommitTimes)) autocommit; context, no target"))
    }

    // MARK: - P8, values

    func values(_ database: CofferDatabase, _ floor: PostgresClient, url: PostgresConnectionURL, into report: Report) async throws {
        let count = quick ? 20_000 : 1_000_000, samples = quick ? 200 : 2_000
        let seeding = try await Clock.time {
            try await withoutSynchronousCommit(url) { seeder in
                try await parallel(count, tasks: 32) { index in
                    try await PostgresStorage<Credential>(database: seeder, namespace: "p8", key: "v\(index)").save(item: Credential.sample(index))
                }
            }
        }
        FileHandle.standardError.write(Data("  P8 seeded \(Format.count(count)) values in \(Format.duration(seeding))\n".utf8))
        try await vacuum(floor)
        var random = SystemRandomNumberGenerator()
        var gets = Timings(), bare = Timings()
        for _ in 0..<samples {
            let index = Int.random(in: 0..<count, using: &random)
            let storage = PostgresStorage<Credential>(database: database, namespace: "p8", key: "v\(index)")
            var value: Credential?
            gets.append(try await Clock.time { value = try await storage.get() })
            guard value == Credential.sample(index) else { throw BenchFailure("P8: value \(index) did not read back") }
            bare.append(try await Clock.time {
                _ = try await floor.query("SELECT value FROM coffer_values WHERE namespace = 'p8' AND key = \("v\(index)")", logger: logger).collect()
            })
        }
        let label = "PostgresStorage get, 1 of \(Format.count(count)) values"
        report.add(Row(id: "P8", measurement: "\(label): median", coffer: gets, referenceName: "bare SELECT", reference: bare,
                       target: .medianAtMost(1_000_000)))
        report.add(Row(id: "P8", measurement: "\(label): p99", coffer: Timings([gets.percentile(0.99)]), referenceName: "bare SELECT p99",
                       reference: Timings([bare.percentile(0.99)]), target: .medianAtMost(5_000_000),
                       note: "one figure: the 99th percentile of \(samples) gets"))
    }

    // MARK: - P8, authenticator records

    func records(_ database: CofferDatabase, _ floor: PostgresClient, url: PostgresConnectionURL, into report: Report) async throws {
        let fixture = Fixture(accounts: quick ? 500 : 10_000, notificationsPerPush: quick ? 10 : 100)
        let owner = "bench", lookups = quick ? 50 : 500
        let label = "PostgresStorageClient \(Format.count(fixture.accounts)) accts/\(Format.count(fixture.mechanismCount)) mechs/\(Format.count(fixture.notificationCount)) notifs"
        let load = try await Clock.time {
            try await withoutSynchronousCommit(url) { seeder in
                let client = PostgresStorageClient(database: seeder, owner: owner)
                let chunks = stride(from: 0, to: fixture.accounts, by: 100).map { $0..<min($0 + 100, fixture.accounts) }
                try await parallel(chunks.count, tasks: 4) { chunk in
                    let range = chunks[chunk]
                    try await client.saveAll(accounts: range.map(fixture.account), mechanisms: range.flatMap(fixture.mechanisms),
                                             notifications: range.flatMap(fixture.notifications))
                }
            }
        }
        report.add(Row(id: "P8", measurement: "\(label): load (saveAll, 100 accounts per transaction, 4 at once)", coffer: Timings([load])))
        try await vacuum(floor)

        let client = PostgresStorageClient(database: database, owner: owner)
        var random = SystemRandomNumberGenerator()
        func any() -> Int { Int.random(in: 0..<fixture.accounts, using: &random) }
        let lookupsToTime: [(String, @Sendable (Int) async throws -> Int, @Sendable (Int) -> PostgresQuery)] = [
            ("account", { i in try await client.account(issuer: fixture.account(i).issuer, accountName: fixture.account(i).accountName) == nil ? 0 : 1 },
             { i in "SELECT * FROM coffer_accounts WHERE owner = 'bench' AND issuer = \(fixture.account(i).issuer) AND account_name = \(fixture.account(i).accountName)" }),
            ("mechanisms(of:)", { i in try await client.mechanisms(of: fixture.account(i)).count },
             { i in "SELECT * FROM coffer_mechanisms WHERE owner = 'bench' AND issuer = \(fixture.account(i).issuer) AND account_name = \(fixture.account(i).accountName)" }),
            ("mechanism(uuid:)", { i in try await client.mechanism(uuid: Fixture.uuid(i, .totp)) == nil ? 0 : 1 },
             { i in "SELECT * FROM coffer_mechanisms WHERE owner = 'bench' AND mechanism_uuid = \(Fixture.uuid(i, .totp))" }),
            ("notifications(of:) (\(fixture.notificationsPerPush) each)", { i in try await client.notifications(of: fixture.push(i)).count },
             { i in "SELECT * FROM coffer_notifications WHERE owner = 'bench' AND mechanism_uuid = \(Fixture.uuid(i, .push)) ORDER BY time_added, message_id" }),
            ("notification(messageId:of:)", { i in try await client.notification(messageId: Fixture.messageId(i, 1), of: fixture.push(i)) == nil ? 0 : 1 },
             { i in "SELECT * FROM coffer_notifications WHERE owner = 'bench' AND mechanism_uuid = \(Fixture.uuid(i, .push)) AND message_id = \(Fixture.messageId(i, 1))" }),
            ("advanceCounter(of:) (a HOTP claim: a read and a transaction)", { i in Int(try await client.advanceCounter(of: Fixture.uuid(i, .hotp)).counter) + 1 },
             // The floor reads the row and updates it in a transaction, as the claim does, but
             // leaves the counter as it is (moving it without sealing the secret again would
             // break the row's binding, and the next claim would rightly refuse it).
             { i in "UPDATE coffer_mechanisms SET counter = counter WHERE owner = 'bench' AND mechanism_uuid = \(Fixture.uuid(i, .hotp)) RETURNING counter" }),
        ]
        for (name, lookup, sql) in lookupsToTime {
            let isLookup = !name.hasPrefix("advanceCounter")
            var times = Timings(), bare = Timings()
            for _ in 0..<lookups {
                let index = any()
                var found = 0
                times.append(try await Clock.time { found = try await lookup(index) })
                guard found > 0 else { throw BenchFailure("P8: \(name) found nothing for account \(index)") }
                bare.append(try await Clock.time {
                    if isLookup {
                        _ = try await floor.query(sql(index), logger: logger).collect()
                    } else {
                        _ = try await floor.query("SELECT * FROM coffer_mechanisms WHERE owner = 'bench' AND mechanism_uuid = \(Fixture.uuid(index, .hotp))",
                                                  logger: logger).collect()
                        _ = try await floor.withTransaction(logger: logger) { try await $0.query(sql(index), logger: logger).collect() }
                    }
                })
            }
            report.add(Row(id: "P8", measurement: "\(label): \(name)", coffer: times, referenceName: "bare SQL", reference: bare,
                           target: isLookup ? .medianAtMost(2_000_000) : .none,
                           note: isLookup ? "" : "a write (a committed transaction), not a lookup: context, no target"))
        }
        guard client.unreadableRecordCount == 0 else { throw BenchFailure("P8: \(client.unreadableRecordCount) unreadable records") }
    }

    // MARK: - Helpers

    /// A bare postgres-nio configuration for `url`, from its public parts: the floor's client and
    /// the admin connections (the throwaway cluster listens on a Unix socket only).
    func bareConfiguration(_ url: PostgresConnectionURL) throws -> PostgresClient.Configuration {
        guard let socket = url.socketPath else { throw BenchFailure("the benchmark's database must be on a Unix socket (scripts/bench starts one)") }
        return PostgresClient.Configuration(unixSocketPath: socket, username: url.user, password: url.password, database: url.database)
    }

    /// A new database for this run, on the server of ``adminURL``.
    func freshDatabase() async throws -> PostgresConnectionURL {
        let admin = try PostgresConnectionURL(adminURL)
        let client = PostgresClient(configuration: try bareConfiguration(admin), backgroundLogger: logger)
        let name = "coffer_bench_\(UInt32.random(in: 0...UInt32.max))"
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            _ = try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger).collect()
        }
        return try PostgresConnectionURL(adminURL.replacingOccurrences(of: "/\(admin.database)?", with: "/\(name)?"))
    }

    /// Runs `body` with a database instance whose connections commit without waiting for the
    /// disk (`synchronous_commit = off`, for seeding only); measurements use the durable default.
    func withoutSynchronousCommit(_ url: PostgresConnectionURL, _ body: (CofferDatabase) async throws -> Void) async throws {
        let admin = PostgresClient(configuration: try bareConfiguration(url), backgroundLogger: logger)
        var options = CofferDatabase.Configuration.Options()
        options.operationTimeout = .seconds(120)
        options.listensForChanges = false
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await admin.run() }
            defer { group.cancelAll() }
            _ = try await admin.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(url.database) SET synchronous_commit = off"), logger: logger).collect()
            // A database instance made after the setting: its connections have it.
            let seeder = try CofferDatabase(configuration: .init(url: url, keyEncryptionKey: kek, options: options), logger: logger)
            group.addTask { try await seeder.run() }
            try await body(seeder)
            _ = try await admin.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(url.database) RESET synchronous_commit"), logger: logger).collect()
        }
    }

    /// Runs `body(0..<count)` on `tasks` concurrent workers.
    func parallel(_ count: Int, tasks: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        let next = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    while let index = next.take(below: count) { try await body(index) }
                }
            }
            try await group.waitForAll()
        }
    }

    func vacuum(_ client: PostgresClient) async throws {
        _ = try await client.query("VACUUM ANALYZE", logger: logger).collect()
    }
}

/// The next index to work on, shared by concurrent workers.
final class Counter: Sendable {
    private let value = Mutex(0)

    /// The next index, or `nil` once `limit` is reached.
    func take(below limit: Int) -> Int? {
        value.withLock { next in
            guard next < limit else { return nil }
            defer { next += 1 }
            return next
        }
    }
}
