import CofferAuthenticator
import CofferPostgres
import Foundation
import TestSupport
import Testing

/// Issue 30, point 5: PostgreSQL keeps each owner's HOTP counter ledger (one sealed row per
/// owner), so a secret removed and added again goes on from its counter on every instance.
@Suite("PostgresStorageClient's HOTP counter ledger", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct PostgresCounterLedgerTests {
    @Test("raised, never lowered; 4 instances raising at once lose nothing; sealed, and another owner reads only its own")
    func ledger() async throws {
        try await TestPostgres.withDatabase { database, url in
            let alice = PostgresStorageClient(database: database, owner: "alice")
            #expect(try await alice.hotpCounters().isEmpty)
            try await alice.rememberHOTPCounters(["k1": 5])
            try await alice.rememberHOTPCounters(["k1": 3, "k2": 1])
            #expect(try await alice.hotpCounters() == ["k1": 5, "k2": 1], "a lower counter never replaces a higher")
            // Instances: clients of their own on one database, raising at the same moment.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        let instance = PostgresStorageClient(database: database, owner: "alice")
                        for round in 0..<10 {
                            try await instance.rememberHOTPCounters(["w\(writer)-\(round)": UInt64(round), "shared": UInt64(writer * 10 + round)])
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counters = try await alice.hotpCounters()
            #expect(counters.count == 43 && counters["shared"] == 39 && counters["k1"] == 5, "\(counters.count) keys")
            #expect(try await PostgresStorageClient(database: database, owner: "bob").hotpCounters().isEmpty, "bob has none")
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_hotp_counters WHERE position('shared'::bytea in ledger) > 0") == "0",
                    "sealed: no key name in the clear")
            // Alice's row given to bob does not open as his: it is bound to its owner.
            try await TestPostgres.psql(url, "UPDATE coffer_hotp_counters SET owner = 'bob' WHERE owner = 'alice'")
            await #expect(throws: (any Error).self) { try await PostgresStorageClient(database: database, owner: "bob").hotpCounters() }
            await #expect(throws: (any Error).self) {
                try await PostgresStorageClient(database: database, owner: "bob").rememberHOTPCounters(["x": 1])
            }
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_hotp_counters") == "1", "a row that does not open is left as it is")
        }
    }

    @Test("a database role other than the tables' owner reads and raises only the ledger row of its own name (row-level security)")
    func rowLevelSecurity() async throws {
        let url = try await TestPostgres.freshDatabase()
        let mallory = "mallory_\(UUID().uuidString.prefix(8).lowercased())"
        try await TestPostgres.running(try TestPostgres.database(url)) { database in
            try await PostgresStorageClient(database: database, owner: "alice").rememberHOTPCounters(["k": 7])
        }
        try await TestPostgres.psql(url, """
            CREATE ROLE \(mallory) LOGIN; GRANT SELECT ON coffer_schema TO \(mallory);
            GRANT SELECT, INSERT, UPDATE, DELETE ON coffer_keys, coffer_hotp_counters TO \(mallory)
            """)
        let malloryURL = url.replacingOccurrences(of: "postgres@", with: "\(mallory)@")
        try await TestPostgres.running(try TestPostgres.database(malloryURL), migrate: false) { database in
            let alice = PostgresStorageClient(database: database, owner: "alice")
            #expect(try await alice.hotpCounters().isEmpty, "alice's row is not visible to another role")
            await #expect(throws: (any Error).self, "nor writable under her name") { try await alice.rememberHOTPCounters(["k": 0]) }
            let own = PostgresStorageClient(database: database, owner: mallory)
            try await own.rememberHOTPCounters(["m": 1])
            #expect(try await own.hotpCounters() == ["m": 1], "under its own name, the role works as usual")
        }
        try await TestPostgres.running(try TestPostgres.database(url), migrate: false) { database in
            let counters = try await PostgresStorageClient(database: database, owner: "alice").hotpCounters()
            #expect(counters == ["k": 7], "alice's row as it was")
        }
    }
}
