import CofferAuthenticator
import CofferOath
import CofferPostgres
import CofferPostgresAuthenticator
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
            #expect(try await alice.rememberedCounters().isEmpty)
            try await alice.remember(["k1": 5])
            try await alice.remember(["k1": 3, "k2": 1])
            #expect(try await alice.rememberedCounters() == ["k1": 5, "k2": 1], "a lower counter never replaces a higher")
            // Instances: clients of their own on one database, raising at the same moment.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        let instance = PostgresStorageClient(database: database, owner: "alice")
                        for round in 0..<10 {
                            try await instance.remember(["w\(writer)-\(round)": UInt64(round), "shared": UInt64(writer * 10 + round)])
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counters = try await alice.rememberedCounters()
            #expect(counters.count == 43 && counters["shared"] == 39 && counters["k1"] == 5, "\(counters.count) keys")
            #expect(try await PostgresStorageClient(database: database, owner: "bob").rememberedCounters().isEmpty, "bob has none")
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_hotp_counters WHERE position('shared'::bytea in ledger) > 0") == "0",
                    "sealed: no key name in the clear")
            // Alice's row given to bob does not open as his: it is bound to its owner.
            try await TestPostgres.psql(url, "UPDATE coffer_hotp_counters SET owner = 'bob' WHERE owner = 'alice'")
            await #expect(throws: (any Error).self) { try await PostgresStorageClient(database: database, owner: "bob").rememberedCounters() }
            await #expect(throws: (any Error).self) {
                try await PostgresStorageClient(database: database, owner: "bob").remember(["x": 1])
            }
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_hotp_counters") == "1", "a row that does not open is left as it is")
        }
    }

    @Test("a database role other than the tables' owner reads and raises only the ledger row of its own name (row-level security)")
    func rowLevelSecurity() async throws {
        let url = try await TestPostgres.freshDatabase()
        let mallory = "mallory_\(UUID().uuidString.prefix(8).lowercased())"
        try await TestPostgres.running(try TestPostgres.database(url)) { database in
            try await PostgresStorageClient(database: database, owner: "alice").remember(["k": 7])
        }
        try await TestPostgres.psql(url, """
            CREATE ROLE \(mallory) LOGIN; GRANT SELECT ON coffer_schema TO \(mallory);
            GRANT SELECT, INSERT, UPDATE, DELETE ON coffer_keys, coffer_hotp_counters TO \(mallory)
            """)
        let malloryURL = url.replacingOccurrences(of: "postgres@", with: "\(mallory)@")
        try await TestPostgres.running(try TestPostgres.database(malloryURL), migrate: false) { database in
            let alice = PostgresStorageClient(database: database, owner: "alice")
            #expect(try await alice.rememberedCounters().isEmpty, "alice's row is not visible to another role")
            await #expect(throws: (any Error).self, "nor writable under her name") { try await alice.remember(["k": 0]) }
            let own = PostgresStorageClient(database: database, owner: mallory)
            try await own.remember(["m": 1])
            #expect(try await own.rememberedCounters() == ["m": 1], "under its own name, the role works as usual")
        }
        try await TestPostgres.running(try TestPostgres.database(url), migrate: false) { database in
            let counters = try await PostgresStorageClient(database: database, owner: "alice").rememberedCounters()
            #expect(counters == ["k": 7], "alice's row as it was")
        }
    }
}

/// Issue 31, point 1: Ping's OATH storage on PostgreSQL keeps the same memory for `OathClient`.
@Suite("PostgresOathStorage's HOTP counter memory", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct PostgresOathCounterMemoryTests {
    @Test("removed on one instance, re-added on another: the fourth RFC 4226 code comes next; sealed; another owner's row does not open")
    func removeAndReadd() async throws {
        try await TestPostgres.withDatabase { database, url in
            try await TestPostgres.running(try TestPostgres.database(url)) { other in
                let code = try await OathCounterMemoryCheck.removeAndReadd(first: PostgresOathStorage(database: database, owner: "alice"),
                                                                           reopened: PostgresOathStorage(database: other, owner: "alice"))
                #expect(code == "969429")
            }
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_oath_hotp_counters WHERE position('COFR'::bytea in ledger) = 1 AND position('969'::bytea in ledger) = 0") == "1",
                    "sealed: no JSON in the clear")
            #expect(try await PostgresOathStorage(database: database, owner: "bob").rememberedCounters().isEmpty, "bob has none")
            try await TestPostgres.psql(url, "UPDATE coffer_oath_hotp_counters SET owner = 'bob' WHERE owner = 'alice'")
            await #expect(throws: OathStorageError.self, "alice's row under bob's name does not open") {
                try await PostgresOathStorage(database: database, owner: "bob").rememberedCounters()
            }
        }
    }
}

/// The remove-and-re-add check of `OathCounterMemoryTests`, for PostgreSQL's storage.
enum OathCounterMemoryCheck {
    static let uri = "otpauth://hotp/Bank:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank&counter=0"

    static func removeAndReadd(first: any OathStorage, reopened: any OathStorage) async throws -> String {
        let client = try await OathClient.createClient { $0.storage = first }
        let credential = try await client.addCredentialFromUri(uri)
        for expected in ["755224", "287082", "359152"] { #expect(try await client.generateCode(credential.id) == expected) }
        #expect(try await client.deleteCredential(credential.id))
        let later = try await OathClient.createClient { $0.storage = reopened }
        return try await later.generateCode(try await later.addCredentialFromUri(uri).id)
    }
}
