import CofferPostgres
import CofferStorage
import CofferStorageTesting
import Foundation
import TestSupport
import Testing

/// Issue 13.1, 3, 4, 6: `PostgresStorage` on a real PostgreSQL server (the throwaway cluster
/// scripts/test starts), each test on a database of its own.
@Suite("PostgresStorage on a real PostgreSQL server", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct PostgresStorageTests {
    struct Session: Codable, Sendable, Equatable {
        var accessToken: String
        var refreshToken: String
    }

    @Test("conforms, with and without a cache")
    func conforms() async throws {
        try await TestPostgres.withDatabase { database, _ in
            for strategy in [CacheStrategy.noCache, .cache, .cacheOnFailure] {
                try await StorageConformance(makeStorage: {
                    PostgresStorage<ConformanceSample>(database: database, namespace: "conformance", key: UUID().uuidString, cacheStrategy: strategy)
                }).run()
            }
        }
    }

    @Test("values are sealed and bound to (namespace, key): a row copied onto another key or changed is refused and left as it was")
    func sealedAndBound() async throws {
        try await TestPostgres.withDatabase { database, url in
            let alice = PostgresStorage<Session>(database: database, namespace: "sessions", key: "alice")
            let bob = PostgresStorage<Session>(database: database, namespace: "sessions", key: "bob")
            try await alice.save(item: Session(accessToken: "alice-access-token-r9", refreshToken: "alice-refresh"))
            try await bob.save(item: Session(accessToken: "bob-access-token-r9", refreshToken: "bob-refresh"))
            let stored = try await TestPostgres.psql(url, "SELECT encode(value, 'escape') FROM coffer_values")
            #expect(!stored.contains("alice-access-token-r9") && !stored.contains("bob-access"), "sealed in the table")

            try await TestPostgres.psql(url, "UPDATE coffer_values SET value = (SELECT value FROM coffer_values WHERE key = 'alice') WHERE key = 'bob'")
            await #expect { try await bob.get() } throws: { error in
                if case .identityMismatch? = error as? StorageError { return true }
                return false
            }
            let copied = try await TestPostgres.psql(url, "SELECT md5(value) FROM coffer_values WHERE key = 'bob'")
            try await TestPostgres.psql(url, "UPDATE coffer_values SET value = set_byte(value, 30, get_byte(value, 30) # 1) WHERE key = 'alice'")
            await #expect { try await alice.get() } throws: { error in
                if case .decryptionFailed? = error as? StorageError { return true }
                return false
            }
            #expect(try await TestPostgres.psql(url, "SELECT md5(value) FROM coffer_values WHERE key = 'bob'") == copied, "left as it was")
            let other = PostgresStorage<Session>(database: database, namespace: "other", key: "alice")
            #expect(try await other.get() == nil, "namespaces are apart")
        }
    }

    @Test("instances share the key ring through the database: a rotation on one is used by the other's next save, even unannounced; old values still open")
    func sharedKeys() async throws {
        let url = try await TestPostgres.freshDatabase()
        try await TestPostgres.running(try TestPostgres.database(url)) { first in
            // The second instance hears of no rotation (no listener) and would trust its
            // remembered primary key for an hour: its next save must still use the new key.
            let deaf = try TestPostgres.database(url) { $0.listensForChanges = false; $0.keyCacheLifetime = .seconds(3600) }
            try await TestPostgres.running(deaf) { second in
                let one = PostgresStorage<Session>(database: first, namespace: "s", key: "k")
                let two = PostgresStorage<Session>(database: second, namespace: "s", key: "k")
                try await one.save(item: Session(accessToken: "a1", refreshToken: "r1"))
                #expect(try await two.get() == Session(accessToken: "a1", refreshToken: "r1"))
                let newKey = try await one.rotateKey()
                #expect(newKey == 2)
                try await two.save(item: Session(accessToken: "a2", refreshToken: "r2"))
                let envelope = try await TestPostgres.psql(url, "SELECT get_byte(value, 8) FROM coffer_values")
                #expect(envelope == "2", "the other instance sealed under the new key (envelope key id)")
                #expect(try await one.get() == Session(accessToken: "a2", refreshToken: "r2"))
                #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_keys") == "2")
                let wrapped = try await TestPostgres.psql(url, "SELECT string_agg(kek_fingerprint, ',') FROM coffer_keys")
                #expect(wrapped == "\(TestPostgres.kek.fingerprint),\(TestPostgres.kek.fingerprint)")
            }
        }
    }

    @Test("an instance with another key-encryption key reads nothing and writes nothing, and says which keys differ")
    func wrongKeyEncryptionKey() async throws {
        let url = try await TestPostgres.freshDatabase()
        try await TestPostgres.running(try TestPostgres.database(url)) { database in
            try await PostgresStorage<Session>(database: database, namespace: "s", key: "k").save(item: Session(accessToken: "a", refreshToken: "r"))
        }
        let before = try await TestPostgres.psql(url, "SELECT md5(string_agg(value::text, '')) FROM coffer_values")
        try await TestPostgres.running(try TestPostgres.database(url, kek: .random())) { stranger in
            let storage = PostgresStorage<Session>(database: stranger, namespace: "s", key: "k")
            for attempt in ["get", "save"] {
                await #expect(Comment(rawValue: attempt)) {
                    if attempt == "get" { _ = try await storage.get() } else { try await storage.save(item: Session(accessToken: "x", refreshToken: "y")) }
                } throws: { error in
                    let failure = error as? PostgresStorageError
                    return failure?.code == .wrongKeyEncryptionKey && failure?.message.contains(TestPostgres.kek.fingerprint) == true
                }
            }
        }
        #expect(try await TestPostgres.psql(url, "SELECT md5(string_agg(value::text, '')) FROM coffer_values") == before)
    }

    @Test("ten instances starting at once migrate exactly once; a database a newer Coffer migrated is refused, untouched")
    func migrations() async throws {
        let url = try await TestPostgres.freshDatabase()
        let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<10 {
                // Exactly once is what is tested, not how fast: under the whole suite's load ten
                // instances queueing on the advisory lock can take longer than the default 10 s.
                group.addTask {
                    try await TestPostgres.running(try TestPostgres.database(url) { $0.operationTimeout = .seconds(60) }, migrate: false) {
                        try await $0.migrate()
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(applied.filter { !$0.isEmpty }.count == 1, "\(applied)")
        #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_schema") == "6", "every migration, once each")

        try await TestPostgres.psql(url, "INSERT INTO coffer_schema (version, name) VALUES (99, 'from the future')")
        try await TestPostgres.running(try TestPostgres.database(url), migrate: false) { database in
            await #expect { try await database.migrate() } throws: { error in
                (error as? PostgresStorageError)?.code == .schemaTooNew && "\(error)".contains("version 99")
            }
            let version = try await database.schemaVersion()
            #expect(version.database == 99 && version.known == 6)
        }
    }

    @Test("6: with .cache, another instance's write reaches this one's memory copy without a read of its own")
    func cacheCoherence() async throws {
        let url = try await TestPostgres.freshDatabase()
        try await TestPostgres.running(try TestPostgres.database(url)) { first in
            try await TestPostgres.running(try TestPostgres.database(url)) { second in
                let reader = PostgresStorage<Session>(database: first, namespace: "s", key: "k", cacheStrategy: .cache)
                let writer = PostgresStorage<Session>(database: second, namespace: "s", key: "k")
                try await TestPostgres.untilListening(first)
                try await writer.save(item: Session(accessToken: "v1", refreshToken: "r"))
                #expect(try await reader.get()?.accessToken == "v1")
                var latencies: [Duration] = []
                for round in 2...11 {
                    try await writer.save(item: Session(accessToken: "v\(round)", refreshToken: "r"))
                    let start = ContinuousClock.now
                    // The notification can take a moment (a busy machine); 10 s only guards a hang.
                    while try await reader.get()?.accessToken != "v\(round)", ContinuousClock.now - start < .seconds(10) {
                        try await Task.sleep(for: .milliseconds(2))
                    }
                    latencies.append(ContinuousClock.now - start)
                    #expect(try await reader.get()?.accessToken == "v\(round)", "write \(round) reached the cached copy")
                }
                // The copy really is served from memory (so the writes above were seen through
                // the notifications): once they have all arrived, a row deleted behind Coffer's
                // back (no notification) is still read from the copy.
                try await Task.sleep(for: .seconds(1))
                try await TestPostgres.psql(url, "DELETE FROM coffer_values")
                #expect(try await reader.get()?.accessToken == "v11")
                let worst = latencies.max() ?? .zero
                ReliabilityReport.record("R9", "another instance's write reaching a .cache copy (LISTEN/NOTIFY)", tried: "10 writes",
                                         outcome: "all seen, the slowest after \(Int(worst.seconds * 1000)) ms")
            }
        }
    }

    @Test("5: a server that is not there gives .unavailable when its deadline passes, never a hang")
    func serverDown() async throws {
        let nowhere = TemporaryDirectory()
        defer { nowhere.remove() }
        let database = try TestPostgres.database("postgresql://postgres@/postgres?host=\(nowhere.url.path)&connect_timeout=1") {
            $0.operationTimeout = .seconds(2)
        }
        try await TestPostgres.running(database, migrate: false) { database in
            await #expect { _ = try await PostgresStorage<Session>(database: database, namespace: "s", key: "k").get() } throws: { error in
                // This database's own deadline, not another's or the default.
                // It says how to give a loaded server longer.
                (error as? PostgresStorageError)?.code == .unavailable && "\(error)".contains("within 2.0 seconds")
                    && "\(error)".contains("COFFER_DATABASE_TIMEOUT")
            }
        }
    }
}
