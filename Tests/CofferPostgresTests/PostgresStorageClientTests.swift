import CofferAuthenticator
import CofferPostgres
import CofferPostgresAuthenticator
import CofferStorage
import CofferStorageTesting
import CofferAuthenticatorTesting
import Foundation
import TestSupport
import Testing

/// Issue 13.2: `PostgresStorageClient` on a real PostgreSQL server, both faces: the spec's
/// synchronous protocol (the conformance kit) and the async API servers use.
@Suite("PostgresStorageClient on a real PostgreSQL server", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct PostgresStorageClientTests {
    let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    func totp(_ issuer: String, _ name: String, uuid: String = UUID().uuidString) -> Mechanism {
        Mechanism(mechanismUUID: uuid, issuer: issuer, accountName: name, type: .totp, secret: secret)
    }

    @Test("conforms to the StorageClient protocol (the conformance kit), each client an owner of its own")
    func conforms() async throws {
        try await TestPostgres.withDatabase { database, _ in
            try await StorageClientConformance(makeClient: { PostgresStorageClient(database: database, owner: UUID().uuidString) }).run()
        }
    }

    @Test("insert never replaces: a taken UUID or an account's existing type is refused, naming which, and nothing is written")
    func insertNeverReplaces() async throws {
        try await TestPostgres.withDatabase { database, url in
            let client = PostgresStorageClient(database: database, owner: "alice")
            let bank = totp("Bank", "alice")
            try await client.insert(bank)
            await #expect(throws: StorageClientError.self) { try await client.insert(totp("Bank", "alice")) }
            await #expect { try await client.insert(totp("Mail", "alice", uuid: bank.mechanismUUID)) } throws: { error in
                if case .uuidTaken(let uuid)? = error as? StorageClientError { return uuid == bank.mechanismUUID }
                return false
            }
            await #expect { try await client.insert(totp("Bank", "alice")) } throws: { error in
                if case .mechanismExists(let issuer, _, let type)? = error as? StorageClientError { return issuer == "Bank" && type == .totp }
                return false
            }
            // save updates the same UUID, account and type, and only that.
            var changed = bank
            changed.digits = 8
            try await client.save(changed)
            #expect(try await client.mechanism(uuid: bank.mechanismUUID)?.digits == 8)
            var moved = bank
            moved.issuer = "Shop"
            await #expect { try await client.save(moved) } throws: { error in
                if case .uuidTaken? = error as? StorageClientError { return true }
                return false
            }
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_mechanisms") == "1")
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_accounts") == "1", "no account for the refused move")
            // Another owner has a namespace of its own: the same UUID and names are fine there.
            try await PostgresStorageClient(database: database, owner: "bob").insert(bank)
            #expect(try await PostgresStorageClient(database: database, owner: "bob").allAccounts().map(\.issuer) == ["Bank"])
        }
    }

    @Test("secrets are sealed, bound to the owner and the row: a row moved to another owner, copied, or edited does not open, and is left")
    func sealedAndBound() async throws {
        try await TestPostgres.withDatabase { database, url in
            let alice = PostgresStorageClient(database: database, owner: "alice")
            let mallory = PostgresStorageClient(database: database, owner: "mallory")
            let bank = totp("Bank", "alice")
            try await alice.insert(bank)
            try await alice.insert(Mechanism(issuer: "Bank", accountName: "alice", type: .hotp, secret: secret, counter: 5))
            try await mallory.save(Account(issuer: "Bank", accountName: "alice"))
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_mechanisms WHERE position('\(secret)'::bytea in secret) > 0") == "0",
                    "the secret is not in the table")

            // Mallory, with access to the database, moves Alice's TOTP row to herself.
            try await TestPostgres.psql(url, "UPDATE coffer_mechanisms SET owner = 'mallory' WHERE mechanism_uuid = '\(bank.mechanismUUID)'")
            #expect(try await mallory.mechanisms(of: Account(issuer: "Bank", accountName: "alice")).isEmpty, "moved: does not open")
            #expect(mallory.unreadableRecordCount == 1)
            try await TestPostgres.psql(url, "UPDATE coffer_mechanisms SET owner = 'alice' WHERE mechanism_uuid = '\(bank.mechanismUUID)'")
            #expect(try await alice.mechanism(uuid: bank.mechanismUUID)?.secret == secret, "back where it belongs, it opens")

            // The HOTP counter rolled back by hand (to replay codes): unreadable, never used.
            let before = try await TestPostgres.psql(url, "SELECT md5(secret) || counter FROM coffer_mechanisms WHERE type = 'hotp'")
            try await TestPostgres.psql(url, "UPDATE coffer_mechanisms SET counter = 0 WHERE type = 'hotp'")
            let hotp = try await alice.mechanisms(of: Account(issuer: "Bank", accountName: "alice"))
            #expect(hotp.map(\.type) == [.totp], "the edited row is left out")
            await #expect(throws: StorageError.self) {
                _ = try await alice.advanceCounter(of: try await TestPostgres.psql(url, "SELECT mechanism_uuid FROM coffer_mechanisms WHERE type = 'hotp'"))
            }
            #expect(try await TestPostgres.psql(url, "SELECT md5(secret) || counter FROM coffer_mechanisms WHERE type = 'hotp'")
                    == before.dropLast() + "0", "left as it was: no code issued, nothing rewritten")
            // And removing the account with its records refuses to delete what it cannot read.
            await #expect { try await alice.delete(Account(issuer: "Bank", accountName: "alice"), withItsRecords: true) } throws: { error in
                if case .stillOwnsRecords(_, let count)? = error as? StorageClientError { return count == 1 }
                return false
            }
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_mechanisms WHERE owner = 'alice'") == "2")
        }
    }

    /// A push mechanism of Corp: alice, stored with `count` notifications `m0`… (challenges `c0`…).
    private func storedPush(_ client: PostgresStorageClient, notifications count: Int) async throws -> Mechanism {
        let push = Mechanism(issuer: "Corp", accountName: "alice", type: .push, secret: secret, challenge: "registration-challenge")
        try await client.insert(push)
        for index in 0..<count {
            try await client.save(PushNotification(messageId: "m\(index)", mechanismUUID: push.mechanismUUID, challenge: "c\(index)"))
        }
        return push
    }

    @Test("a challenge copied onto another notification does not open there: that one is skipped, each other keeps its own, in order")
    func copiedChallenge() async throws {
        try await TestPostgres.withDatabase { database, url in
            let client = PostgresStorageClient(database: database, owner: "alice")
            let push = try await storedPush(client, notifications: 4)
            try await TestPostgres.psql(url, """
                UPDATE coffer_notifications SET challenge = (SELECT challenge FROM coffer_notifications WHERE message_id = 'm0') WHERE message_id = 'm1'
                """)
            #expect(try await client.notifications(of: push).map(\.challenge) == ["c0", "c2", "c3"])
            #expect(try await client.notification(messageId: "m2", of: push)?.challenge == "c2")
            #expect(try await client.notification(messageId: "m1", of: push) == nil)
        }
    }

    @Test("removal: refused while records are owned; with them, everything goes in one transaction")
    func removal() async throws {
        try await TestPostgres.withDatabase { database, url in
            let client = PostgresStorageClient(database: database, owner: "alice")
            let push = try await storedPush(client, notifications: 3)
            try await client.insert(totp("Corp", "alice"))
            #expect(try await client.notifications(of: push).map(\.challenge) == ["c0", "c1", "c2"])
            let corp = Account(issuer: "Corp", accountName: "alice")
            await #expect(throws: StorageClientError.self) { try await client.delete(corp) }
            await #expect(throws: StorageClientError.self) { try await client.delete(push) }
            #expect(!client.removeAccount(account: corp), "the sync face answers false")
            #expect(client.lastError is StorageClientError)
            #expect(try await client.delete(corp, withItsRecords: true))
            #expect(try await client.recordCounts() == (0, 0, 0))
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_notifications") == "0")
            // A notification for a mechanism that is not stored is refused.
            await #expect { try await client.save(PushNotification(messageId: "x", mechanismUUID: "nowhere", challenge: "c")) } throws: { error in
                if case .mechanismNotFound("nowhere")? = error as? StorageClientError { return true }
                return false
            }
        }
    }

    @Test("four instances × 50 HOTP codes at once: 200 distinct counter values, the counter at 200")
    func concurrentCounters() async throws {
        let url = try await TestPostgres.freshDatabase()
        let mechanism = Mechanism(issuer: "Bank", accountName: "bob", type: .hotp, secret: secret)
        try await TestPostgres.running(try TestPostgres.database(url)) { try await PostgresStorageClient(database: $0, owner: "bob").insert(mechanism) }
        let claimed = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await TestPostgres.running(try TestPostgres.database(url)) { database in
                        let client = PostgresStorageClient(database: database, owner: "bob")
                        var counters: [UInt64] = []
                        for _ in 0..<50 { counters.append(try await client.advanceCounter(of: mechanism.mechanismUUID).counter) }
                        return counters
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(claimed.sorted() == Array(0..<200), "every value once, none skipped")
        #expect(try await TestPostgres.psql(url, "SELECT counter FROM coffer_mechanisms") == "200")
        ReliabilityReport.record("R9", "4 instances claiming HOTP counters from one PostgreSQL row at once", tried: "4 × 50",
                                 outcome: "\(Set(claimed).count) distinct of \(claimed.count)")
    }

    @Test("another key-encryption key: reads and writes fail with .wrongKeyEncryptionKey, nothing counted as damaged, nothing written")
    func wrongKeyEncryptionKey() async throws {
        let url = try await TestPostgres.freshDatabase()
        try await TestPostgres.running(try TestPostgres.database(url)) { try await PostgresStorageClient(database: $0, owner: "a").insert(totp("Bank", "a")) }
        let before = try await TestPostgres.psql(url, "SELECT md5(string_agg(secret::text, '')) FROM coffer_mechanisms")
        try await TestPostgres.running(try TestPostgres.database(url, kek: .random())) { stranger in
            let client = PostgresStorageClient(database: stranger, owner: "a")
            await #expect { _ = try await client.mechanisms(of: Account(issuer: "Bank", accountName: "a")) } throws: { error in
                (error as? PostgresStorageError)?.code == .wrongKeyEncryptionKey
            }
            await #expect { try await client.insert(totp("Mail", "a")) } throws: { error in
                (error as? PostgresStorageError)?.code == .wrongKeyEncryptionKey
            }
            #expect(client.getAllNotifications().isEmpty && client.unreadableRecordCount == 0)
            #expect(!client.setMechanism(mechanism: totp("Shop", "a")))
            #expect((client.lastError as? PostgresStorageError)?.code == .wrongKeyEncryptionKey)
        }
        #expect(try await TestPostgres.psql(url, "SELECT md5(string_agg(secret::text, '')) FROM coffer_mechanisms") == before)
        #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_accounts") == "1", "no account made for refused writes")
    }

    @Test("a rotation on one instance is used by another's next write of every kind, though it heard of none; old secrets still open")
    func rotationOnNextWrite() async throws {
        let url = try await TestPostgres.freshDatabase()
        try await TestPostgres.running(try TestPostgres.database(url)) { first in
            let deaf = try TestPostgres.database(url) { $0.listensForChanges = false; $0.keyCacheLifetime = .seconds(3600) }
            try await TestPostgres.running(deaf) { second in
                let rotating = PostgresStorageClient(database: first, owner: "alice")
                let client = PostgresStorageClient(database: second, owner: "alice")
                let old = totp("Old", "alice")
                try await client.insert(old)
                let hotp = Mechanism(issuer: "Bank", accountName: "alice", type: .hotp, secret: secret)
                try await client.insert(hotp)
                let push = Mechanism(issuer: "Push", accountName: "alice", type: .push, secret: secret, challenge: "Y2hhbGxlbmdl")
                try await client.insert(push)
                func keyIDs(_ table: String, _ column: String) async throws -> String {
                    try await TestPostgres.psql(url, "SELECT string_agg(DISTINCT get_byte(\(column), 8)::text, ',') FROM \(table)")
                }
                #expect(try await keyIDs("coffer_mechanisms", "secret") == "1")

                // Each kind of write, after a rotation the writing instance was not told of.
                func rotated() async throws -> Int { Int(try await first.keys.rotateKey(for: rotating.keyAlias).id) }
                var newest = try await rotated()
                try await client.insert(totp("New", "alice"))
                #expect(try await TestPostgres.psql(url, "SELECT get_byte(secret, 8) FROM coffer_mechanisms WHERE issuer = 'New'") == "\(newest)")
                newest = try await rotated()
                _ = try await client.advanceCounter(of: hotp.mechanismUUID)
                #expect(try await TestPostgres.psql(url, "SELECT get_byte(secret, 8) FROM coffer_mechanisms WHERE issuer = 'Bank'") == "\(newest)")
                newest = try await rotated()
                try await client.save(PushNotification(messageId: "m1", mechanismUUID: push.mechanismUUID, challenge: "Y2hhbGxlbmdl"))
                #expect(try await keyIDs("coffer_notifications", "challenge") == "\(newest)")
                newest = try await rotated()
                try await client.saveAll(mechanisms: [totp("Batch", "alice")],
                                         notifications: [PushNotification(messageId: "m2", mechanismUUID: push.mechanismUUID, challenge: "Y2hhbGxlbmdl")])
                #expect(try await TestPostgres.psql(url, "SELECT get_byte(secret, 8) FROM coffer_mechanisms WHERE issuer = 'Batch'") == "\(newest)")
                #expect(try await TestPostgres.psql(url, "SELECT get_byte(challenge, 8) FROM coffer_notifications WHERE message_id = 'm2'") == "\(newest)")

                // Sealed under key 1, still opened; nothing became unreadable.
                #expect(try await client.mechanism(uuid: old.mechanismUUID)?.secret == secret)
                #expect(try await rotating.allNotifications().count == 2)
                #expect(client.unreadableRecordCount == 0 && rotating.unreadableRecordCount == 0)
            }
        }
    }

    @Test("many records at once: all or none")
    func saveAll() async throws {
        try await TestPostgres.withDatabase { database, url in
            let client = PostgresStorageClient(database: database, owner: "alice")
            let mechanisms = (0..<20).map { totp("Issuer \($0)", "alice") }
            let push = Mechanism(issuer: "Corp", accountName: "alice", type: .push, secret: secret)
            try await client.saveAll(accounts: [Account(issuer: "Corp", accountName: "alice", displayIssuer: "Work")],
                                     mechanisms: mechanisms + [push],
                                     notifications: [PushNotification(messageId: "m", mechanismUUID: push.mechanismUUID, challenge: "c")])
            #expect(try await client.recordCounts() == (21, 21, 1))
            #expect(try await client.account(issuer: "Corp", accountName: "alice")?.displayIssuer == "Work")
            // One clash among many: nothing of the batch is written.
            await #expect(throws: StorageClientError.self) {
                try await client.saveAll(mechanisms: [totp("New", "alice"), totp("Issuer 3", "alice")])
            }
            #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_accounts WHERE issuer = 'New'") == "0")
        }
    }
}
