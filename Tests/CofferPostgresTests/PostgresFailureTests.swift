import CofferAuthenticator
import CofferPostgres
import CofferPostgresAuthenticator
import CofferStorage
import Foundation
import ServiceLifecycle
import ServiceLifecycleTestKit
import TestSupport
import Testing

/// Issue 13, "How it is tested": several processes on one database, the server killed during
/// writes, connections terminated mid-operation, and a graceful shutdown (R9).
@Suite("PostgreSQL backends: processes, crashes, terminated connections", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct PostgresFailureTests {
    static let operations = Int(ProcessInfo.processInfo.environment["COFFER_PROCESS_OPERATIONS"] ?? "") ?? 500

    /// A new key-encryption key file for helper processes, in `directory`.
    func kekFile(in directory: TemporaryDirectory) throws -> (path: String, kek: KeyEncryptionKey) {
        let path = directory.appending("postgres.kek").path
        return (path, try KeyEncryptionKey.create(atFile: path))
    }

    /// What coffer-stress's `postgres-save` writes for (writer, index): a header and a body that
    /// must match it, so a torn or mixed-up value shows.
    func value(writer: Int, index: Int) -> String {
        "w\(writer)r\(index):" + String(repeating: String(writer % 10), count: 8_000 + index % 97)
    }

    func cluster(_ arguments: [String]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(executable: TestPostgres.root.appendingPathComponent("scripts/postgres-cluster"), arguments, deadline: .seconds(60))
    }

    func stress(_ arguments: [String]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(executable: try CofferProcess.builtExecutable("coffer-stress"), arguments, deadline: .seconds(300))
    }

    /// Runs `coffer-stress` as 4 processes at once, process `n` with `arguments(n)`.
    func fourProcesses(_ arguments: @escaping @Sendable (Int) -> [String]) async throws -> [CofferProcess.Result] {
        try await withThrowingTaskGroup(of: CofferProcess.Result.self) { group in
            for process in 0..<4 { group.addTask { try await stress(arguments(process)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test("4 processes × 500 adds on one database: every account there, every secret opens")
    func concurrentAdds() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try await TestPostgres.freshDatabase()
        let (kekPath, kek) = try kekFile(in: directory)
        let results = try await fourProcesses { ["postgres-add", url, kekPath, "shared", "\($0)", "\(Self.operations)"] }
        for result in results { #expect(result.status == 0, "\(result.stderr)") }
        try await TestPostgres.running(try TestPostgres.database(url, kek: kek)) { database in
            let client = PostgresStorageClient(database: database, owner: "shared")
            let accounts = try await client.allAccounts()
            #expect(accounts.count == 4 * Self.operations)
            var mechanisms = 0
            for account in accounts { mechanisms += try await client.mechanisms(of: account).count }
            #expect(mechanisms == 4 * Self.operations && client.unreadableRecordCount == 0)
            ReliabilityReport.record("R9", "4 processes adding accounts to one PostgreSQL database at once", tried: "4 × \(Self.operations) adds",
                                     outcome: "\(mechanisms) of \(4 * Self.operations) stored and readable")
        }
    }

    @Test("4 processes × 50 HOTP counters from one row: 200 distinct values, none skipped")
    func concurrentCounters() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try await TestPostgres.freshDatabase()
        let (kekPath, kek) = try kekFile(in: directory)
        let hotp = Mechanism(issuer: "Bank", accountName: "bob", type: .hotp, secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        try await TestPostgres.running(try TestPostgres.database(url, kek: kek)) { try await PostgresStorageClient(database: $0, owner: "bob").insert(hotp) }
        let results = try await fourProcesses { _ in ["postgres-hotp", url, kekPath, "bob", hotp.mechanismUUID, "50"] }
        for result in results { #expect(result.status == 0, "\(result.stderr)") }
        let counters = results.flatMap { $0.stdout.split(separator: "\n").compactMap { UInt64($0) } }
        #expect(counters.sorted() == Array(0..<200))
        ReliabilityReport.record("R9", "4 processes claiming HOTP counters from one PostgreSQL row", tried: "4 × 50",
                                 outcome: "\(Set(counters).count) distinct of \(counters.count)")
    }

    @Test("the server killed (pg_ctl stop -m immediate) during 4 writers × 500 saves: after the restart every acknowledged write is there and whole")
    func serverCrash() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // A cluster of this test's own, to kill.
        let cluster = directory.appending("cluster").path
        let created = try await self.cluster(["create", cluster])
        try #require(created.status == 0, "\(created.stderr)")
        do {
            try await crash(cluster: cluster, url: created.stdout.trimmingCharacters(in: .whitespacesAndNewlines), directory: directory)
        } catch {
            _ = try? await self.cluster(["remove", cluster])
            throw error
        }
        _ = try await self.cluster(["remove", cluster])
    }

    func crash(cluster: String, url: String, directory: TemporaryDirectory) async throws {
        let (kekPath, kek) = try kekFile(in: directory)
        async let writers = fourProcesses { ["postgres-save", url, kekPath, "\($0)", "\(Self.operations)"] }
        // Twice: kill the server in the middle of the writes, leave it down a moment, start it.
        for _ in 0..<2 {
            try await Task.sleep(for: .seconds(2))
            let stopped = try await self.cluster(["stop", cluster, "immediate"])
            #expect(stopped.status == 0, "\(stopped.stderr)")
            try await Task.sleep(for: .seconds(1))
            let started = try await self.cluster(["start", cluster])
            #expect(started.status == 0, "\(started.stderr)")
        }
        let results = try await writers
        var acknowledged: [(writer: Int, index: Int)] = []
        for (writer, result) in results.enumerated() {
            #expect(result.status == 0, "writer \(writer): \(result.stderr)")
            acknowledged += result.stdout.split(separator: "\n").compactMap { line in
                line.hasPrefix("ack ") ? Int(line.dropFirst(4)).map { (writer, $0) } : nil
            }
        }
        let (lost, torn) = try await TestPostgres.running(try TestPostgres.database(url, kek: kek)) { database in
            var lost = 0, torn = 0
            for writer in 0..<4 {
                for index in 0..<Self.operations {
                    let value = try await PostgresStorage<String>(database: database, namespace: "w\(writer)", key: "k\(index)").get()
                    if value == nil { lost += 1 } else if value != self.value(writer: writer, index: index) { torn += 1 }
                }
            }
            return (lost, torn)
        }
        #expect(acknowledged.count == 4 * Self.operations, "every write was acknowledged in the end (the writers retry)")
        #expect(lost == 0 && torn == 0, "\(lost) lost, \(torn) not whole")
        ReliabilityReport.record("R9", "PostgreSQL killed (-m immediate) twice during 4 writers × \(Self.operations) saves",
                                 tried: "\(acknowledged.count) acknowledged writes", outcome: "\(lost) lost, \(torn) not whole")
    }

    @Test("connections terminated mid-operation (pg_terminate_backend): typed errors, no hang, no counter value twice, no batch half-written")
    func terminatedConnections() async throws {
        let url = try await TestPostgres.freshDatabase()
        let hotp = Mechanism(issuer: "Bank", accountName: "bob", type: .hotp, secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        // 15 s: the suite runs many heavy tests at once on two cores; a hang would still end the test.
        try await TestPostgres.running(try TestPostgres.database(url) { $0.operationTimeout = .seconds(15) }) { database in
            let client = PostgresStorageClient(database: database, owner: "bob")
            try await client.insert(hotp)
            let outcome = try await withThrowingTaskGroup(of: (claimed: [UInt64], failures: [String], batches: [Int]).self) { group in
                // The killer: every 20 ms, every other connection to this database.
                group.addTask {
                    for _ in 0..<100 {
                        try await TestPostgres.psql(url, """
                            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                            WHERE datname = current_database() AND pid <> pg_backend_pid()
                            """)
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    return ([], [], [])
                }
                for worker in 0..<3 {
                    group.addTask {
                        var claimed: [UInt64] = [], failures: [String] = [], batches: [Int] = []
                        for round in 0..<60 {
                            do {
                                if worker == 0 {
                                    // A batch of 20 accounts in one transaction: all or nothing.
                                    batches.append(round)
                                    try await client.saveAll(mechanisms: (0..<20).map {
                                        Mechanism(issuer: "Batch \(round)", accountName: "user \($0)", type: .totp, secret: "JBSWY3DPEHPK3PXP")
                                    })
                                } else {
                                    claimed.append(try await client.advanceCounter(of: hotp.mechanismUUID).counter)
                                }
                            } catch let error as PostgresStorageError {
                                failures.append("\(error.code)")
                            } catch {
                                failures.append("untyped: \(type(of: error)) \(error)")
                            }
                        }
                        return (claimed, failures, batches)
                    }
                }
                return try await group.reduce(into: (claimed: [UInt64](), failures: [String](), batches: [Int]())) {
                    $0.claimed += $1.claimed
                    $0.failures += $1.failures
                    $0.batches += $1.batches
                }
            }
            #expect(Set(outcome.claimed).count == outcome.claimed.count, "no counter value claimed twice")
            #expect(outcome.failures.allSatisfy { !$0.hasPrefix("untyped") }, "\(outcome.failures.filter { $0.hasPrefix("untyped") })")
            let sizes = try await TestPostgres.psql(url, "SELECT string_agg(DISTINCT n::text, ',') FROM (SELECT count(*) AS n FROM coffer_mechanisms WHERE issuer LIKE 'Batch %' GROUP BY issuer) c")
            #expect(sizes.isEmpty || sizes == "20", "each batch whole or absent: group sizes \(sizes)")
            // After the storm, everything works again.
            let next = try await client.advanceCounter(of: hotp.mechanismUUID)
            #expect(!outcome.claimed.contains(next.counter))
            ReliabilityReport.record("R9", "connections terminated every 20 ms during HOTP claims and batch saves",
                                     tried: "3 tasks × 60 HOTP claims or batch saves",
                                     outcome: "\(outcome.failures.count) typed errors, 0 hangs, 0 counters twice, 0 half batches")
        }
    }

    @Test("a graceful shutdown (ServiceGroup) ends run(); operations afterwards fail with .unavailable, no hang")
    func gracefulShutdown() async throws {
        let url = try await TestPostgres.freshDatabase()
        let database = try TestPostgres.database(url)  // the default deadline: setting up under the suite's load can take seconds
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await database.run() }
                try await database.migrate()
                let storage = PostgresStorage<String>(database: database, namespace: "s", key: "k")
                try await storage.save(item: "before")
                trigger.triggerGracefulShutdown()
                try await group.next()  // run() returned
                await #expect { _ = try await storage.get() } throws: { error in
                    (error as? PostgresStorageError)?.code == .unavailable
                }
            }
        }
    }
}
