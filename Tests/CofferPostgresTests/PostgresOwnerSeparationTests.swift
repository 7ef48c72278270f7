import CofferAuthenticator
import CofferPostgres
import CofferPostgresAuthenticator
import CofferStorage
import Foundation
import Logging
import PostgresNIO
import TestSupport
import Testing

/// The fifth round (issue 20, items 3 and 6): an owner is a boundary that keys enforce, and
/// row-level security adds the database's own; change notifications tell a listener nothing.
// Serialized: its tests start many `coffer` processes, which would crowd the suite's two cores.
@Suite("Fifth round: PostgreSQL owners separated by their keys and their roles", .serialized,
       .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct PostgresOwnerSeparationTests {
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    /// Every row of Coffer's authenticator tables and key ring, to compare before and after.
    static func snapshot(_ url: String) async throws -> String {
        try await TestPostgres.psql(url, """
            SELECT md5(string_agg(t, '|' ORDER BY t)) FROM (
              SELECT row(a.*)::text AS t FROM coffer_accounts a UNION ALL SELECT row(m.*)::text FROM coffer_mechanisms m
              UNION ALL SELECT row(n.*)::text FROM coffer_notifications n UNION ALL SELECT row(k.*)::text FROM coffer_keys k) rows
            """)
    }

    @Test("3: with Alice's name and a key-encryption key of his own, Mallory's client opens and changes nothing of Alice's")
    func ownKeyRingsSeparateOwners() async throws {
        try await TestPostgres.withDatabase { database, url in
            let alice = try PostgresStorageClient(database: database, owner: "alice", keyEncryptionKey: .random())
            let hotp = Mechanism(issuer: "Bank", accountName: "alice", type: .hotp, secret: Self.secret)
            try await alice.insert(hotp)
            try await alice.insert(Mechanism(issuer: "Mail", accountName: "alice", type: .totp, secret: Self.secret))
            #expect(alice.hasOwnKeyRing)
            let before = try await Self.snapshot(url)

            // The same database, the instance's own key-encryption key, and Mallory's: none opens
            // Alice's ring.
            let mallory = try PostgresStorageClient(database: database, owner: "alice", keyEncryptionKey: .random())
            let shared = PostgresStorageClient(database: database, owner: "alice")
            for client in [mallory] {
                await #expect { try await client.verifyKeyRing() } throws: { ($0 as? PostgresStorageError)?.code == .wrongKeyEncryptionKey }
                #expect(client.getMechanismForUUID(uuid: hotp.mechanismUUID) == nil)
                #expect((client.lastError as? PostgresStorageError)?.code == .wrongKeyEncryptionKey, "a key error, not damage")
                #expect(client.unreadableRecordCount == 0)
                await #expect(throws: PostgresStorageError.self) { _ = try await client.advanceCounter(of: hotp.mechanismUUID) }
                await #expect(throws: PostgresStorageError.self) {
                    try await client.insert(Mechanism(issuer: "Evil", accountName: "alice", type: .totp, secret: Self.secret))
                }
                // Unsealed writes too: the account rows are Alice's and stay as they are.
                #expect(!client.setAccount(account: Account(issuer: "Bank", accountName: "alice", displayIssuer: "Mallory's bank")))
                #expect(!client.removeMechanism(mechanism: hotp))
                #expect(!client.removeAccount(account: Account(issuer: "Mail", accountName: "alice")))
            }
            // The shared ring has no key for Alice's secrets: they are not readable through it.
            #expect(shared.getMechanismForUUID(uuid: hotp.mechanismUUID) == nil)
            #expect(try await Self.snapshot(url) == before, "nothing of Alice's changed")
            #expect(try await alice.mechanism(uuid: hotp.mechanismUUID)?.secret == Self.secret)
            #expect(try await alice.advanceCounter(of: hotp.mechanismUUID).counter == 0)
        }
    }

    @Test("3: the coffer tool gives each owner a key ring of their own; another user's key with her name opens nothing and changes nothing")
    func toolOwnersAreSeparate() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try await TestPostgres.freshDatabase()
        func coffer(_ home: String, _ arguments: [String], input: String? = nil, owner: String) async throws -> CofferProcess.Result {
            try await CofferProcess.run(executable: try CofferProcess.executable, arguments, input: input,
                                        environment: ["COFFER_HOME": directory.appending(home).path, "COFFER_DATABASE_URL": url,
                                                      "COFFER_BACKEND": "postgres", "COFFER_OWNER": owner],
                                        removing: ["COFFER_DATABASE_KEK", "DBUS_SESSION_BUS_ADDRESS"])
        }
        for home in ["alice", "mallory"] { #expect(try await coffer(home, ["key", "new-kek"], owner: home).status == 0) }
        #expect(try await coffer("alice", ["add", "-"], input: "otpauth://hotp/Bank:alice?secret=\(Self.secret)&issuer=Bank\n", owner: "alice").status == 0)
        #expect(try await coffer("mallory", ["add", "-"], input: "otpauth://totp/Mine:m?secret=\(Self.secret)\n", owner: "mallory").status == 0)
        #expect(try await TestPostgres.psql(url, "SELECT string_agg(DISTINCT owner, ',' ORDER BY owner) FROM coffer_keys") == "alice,mallory",
                "a key ring each")
        let before = try await Self.snapshot(url)
        for arguments in [["list"], ["code", "Bank"], ["remove", "Bank", "--yes"], ["rename", "Bank", "--issuer", "Mine now"], ["add", "-"]] {
            let result = try await coffer("mallory", arguments, input: "otpauth://totp/Evil:alice?secret=\(Self.secret)\n", owner: "alice")
            #expect(result.status == 1 && result.stderr.contains("only that owner's key-encryption key opens it"), "\(arguments): \(result.stderr)")
            #expect(!result.stdout.contains(Self.secret) && !result.stdout.contains("Bank"), "\(arguments): \(result.stdout)")
        }
        #expect(try await Self.snapshot(url) == before, "nothing changed")
        let code = try await coffer("alice", ["code", "Bank", "--raw"], owner: "alice")
        #expect(code.stdout == (try OathGenerator.hotp(secret: Base32.decode(Self.secret), counter: 0)) + "\n", "\(code.stderr)")
    }

    @Test("3: a role other than the tables' owner sees and writes only the rows of its own name (row-level security)")
    func rowLevelSecurity() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try await TestPostgres.freshDatabase()
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let (owner, app, alice, mallory) = ("owner_\(suffix)", "app_\(suffix)", "alice_\(suffix)", "mallory_\(suffix)")
        func connectAs(_ role: String) -> String { url.replacingOccurrences(of: "postgres@", with: "\(role)@") }
        // A role that is not a superuser migrates and so owns the tables; an instance's role is a
        // member of it; people's roles are granted the tables, as the README says.
        try await TestPostgres.psql(url, """
            CREATE ROLE \(owner) LOGIN; CREATE ROLE \(app) LOGIN IN ROLE \(owner);
            CREATE ROLE \(alice) LOGIN; CREATE ROLE \(mallory) LOGIN; GRANT CREATE, USAGE ON SCHEMA public TO \(owner)
            """)
        // The instances' shared ring has a key (the values' alias), which other roles may read.
        try await TestPostgres.running(try TestPostgres.database(connectAs(owner))) { database in
            _ = try await database.keys.createKey(for: "org.coffer.postgres.values")
        }
        try await TestPostgres.psql(connectAs(owner), """
            GRANT SELECT ON coffer_schema TO \(alice), \(mallory);
            GRANT SELECT, INSERT, UPDATE, DELETE ON coffer_keys, coffer_accounts, coffer_mechanisms, coffer_notifications, coffer_push_tokens
                TO \(alice), \(mallory)
            """)
        func coffer(_ role: String, _ arguments: [String], input: String? = nil, owner: String, kek: String) async throws -> CofferProcess.Result {
            try await CofferProcess.run(executable: try CofferProcess.executable, arguments, input: input,
                                        environment: ["COFFER_HOME": directory.appending(kek).path, "COFFER_BACKEND": "postgres",
                                                      "COFFER_DATABASE_URL": connectAs(role),
                                                      "COFFER_OWNER": owner],
                                        removing: ["COFFER_DATABASE_KEK", "DBUS_SESSION_BUS_ADDRESS"])
        }
        for home in ["alice", "mallory"] {
            #expect(try await coffer(alice, ["key", "new-kek"], owner: alice, kek: home).status == 0)
        }
        let added = try await coffer(alice, ["add", "-"], input: "otpauth://totp/Bank:a?secret=\(Self.secret)\n", owner: alice, kek: "alice")
        #expect(added.status == 0, "\(added.stderr)")
        let before = try await Self.snapshot(url)

        // Mallory's role, claiming Alice's name: the database shows it none of her rows, and
        // refuses rows in her name.
        let list = try await coffer(mallory, ["list"], owner: alice, kek: "mallory")
        #expect(list.status == 0 && list.stderr.hasPrefix("No accounts yet") && list.stdout.isEmpty, "\(list.stdout) \(list.stderr)")
        let add = try await coffer(mallory, ["add", "-"], input: "otpauth://totp/Evil:a?secret=\(Self.secret)\n", owner: alice, kek: "mallory")
        #expect(add.status == 1 && add.stderr.contains("42501"), "\(add.stderr)")
        let malloryURL = connectAs(mallory)
        #expect(try await TestPostgres.psql(malloryURL, "SELECT count(*) FROM coffer_mechanisms") == "0")
        #expect(try await TestPostgres.psql(malloryURL, "SELECT count(*) FROM coffer_keys WHERE owner <> ''") == "0", "none of Alice's ring")
        #expect(try await TestPostgres.psql(malloryURL, "WITH gone AS (DELETE FROM coffer_accounts RETURNING 1) SELECT count(*) FROM gone") == "0")
        // The shared ring: readable, never deleted, moved or changed by such a role (review finding 3).
        #expect(try await TestPostgres.psql(malloryURL, "SELECT count(*) FROM coffer_keys WHERE owner = ''") == "1")
        #expect(try await TestPostgres.psql(malloryURL, "WITH gone AS (DELETE FROM coffer_keys WHERE owner = '' RETURNING 1) SELECT count(*) FROM gone") == "0")
        #expect(try await TestPostgres.psql(malloryURL, """
            WITH moved AS (UPDATE coffer_keys SET owner = '\(mallory)' WHERE owner = '' RETURNING 1) SELECT count(*) FROM moved
            """) == "0")
        #expect(try await TestPostgres.psql(malloryURL, """
            WITH changed AS (UPDATE coffer_keys SET wrapped = 'x' WHERE owner = '' RETURNING 1) SELECT count(*) FROM changed
            """) == "0")
        #expect(try await Self.snapshot(url) == before, "nothing of Alice's changed")
        // Under its own name, Mallory's role works as usual.
        let own = try await coffer(mallory, ["add", "-"], input: "otpauth://totp/Mine:m?secret=\(Self.secret)\n", owner: mallory, kek: "mallory")
        #expect(own.status == 0, "\(own.stderr)")
        // The tables' owner, and an instance's role that is a member of it, see both.
        for role in [owner, app] { #expect(try await TestPostgres.psql(connectAs(role), "SELECT count(*) FROM coffer_accounts") == "2", "\(role)") }
    }

    @Test("3: secrets sealed under the shared ring (before owners had rings of their own) move to the owner's ring once, and read back")
    func movesToOwnKeyRing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try await TestPostgres.freshDatabase()
        let kekPath = directory.appending("home/keys/postgres.kek").path
        try FileManager.default.createDirectory(atPath: directory.appending("home/keys").path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let kek = try KeyEncryptionKey.create(atFile: kekPath)
        let hotp = Mechanism(issuer: "Bank", accountName: "alice", type: .hotp, secret: Self.secret, counter: 7)
        let push = Mechanism(issuer: "Push", accountName: "alice", type: .push, secret: Self.secret, challenge: "Y2hhbGxlbmdl")
        try await TestPostgres.running(try TestPostgres.database(url, kek: kek)) { database in
            let old = PostgresStorageClient(database: database, owner: "alice")
            try await old.insert(hotp)
            try await old.insert(push)
            try await old.save(PushNotification(messageId: "n1", mechanismUUID: push.mechanismUUID, challenge: "bm90aWZ5"))
        }
        func coffer(_ arguments: [String], kek: String = kekPath) async throws -> CofferProcess.Result {
            try await CofferProcess.run(executable: try CofferProcess.executable, arguments,
                                        environment: ["COFFER_HOME": directory.appending("home").path, "COFFER_DATABASE_URL": url,
                                                      "COFFER_BACKEND": "postgres", "COFFER_OWNER": "alice", "COFFER_DATABASE_KEK": kek],
                                        removing: ["DBUS_SESSION_BUS_ADDRESS"])
        }
        // With another key-encryption key: refused, nothing moved.
        let otherPath = directory.appending("other.kek").path
        try KeyEncryptionKey.create(atFile: otherPath)
        let before = try await Self.snapshot(url)
        let refused = try await coffer(["list"], kek: otherPath)
        #expect(refused.status == 1 && refused.stderr.contains("key-encryption key"), "\(refused.stderr)")
        #expect(try await Self.snapshot(url) == before)

        let code = try await coffer(["code", "Bank", "--raw"])
        #expect(code.status == 0, "\(code.stderr)")
        #expect(code.stderr.contains("4 secret(s) of owner alice moved"), "the HOTP and push secrets, the push and notification challenges: \(code.stderr)")
        #expect(code.stdout == (try OathGenerator.hotp(secret: Base32.decode(Self.secret), counter: 7)) + "\n")
        #expect(try await TestPostgres.psql(url, "SELECT count(*) FROM coffer_keys WHERE owner = 'alice'") == "1")
        let again = try await coffer(["list", "--json"])
        #expect(!again.stderr.contains("moved"), "once")
        #expect(again.stdout.contains("\"counter\" : 8"))
        try await TestPostgres.running(try TestPostgres.database(url, kek: kek)) { database in
            let own = try PostgresStorageClient(database: database, owner: "alice", keyEncryptionKey: kek)
            #expect(try await own.mechanism(uuid: push.mechanismUUID)?.challenge == "Y2hhbGxlbmdl")
            #expect(try await own.allNotifications().first?.challenge == "bm90aWZ5")
            #expect(try await PostgresStorageClient(database: database, owner: "alice").mechanism(uuid: hotp.mechanismUUID) == nil,
                    "no longer under the shared ring")
        }
    }

    @Test("6: a role that may only connect hears change notifications as bare tags: no namespace, key, owner or alias")
    func listenerLearnsNothing() async throws {
        try await TestPostgres.withDatabase { database, url in
            let role = "listener_\(UUID().uuidString.prefix(8).lowercased())"
            try await TestPostgres.psql(url, "CREATE ROLE \(role) LOGIN")
            let configuration = try PostgresConnectionURL(url.replacingOccurrences(of: "postgres@", with: "\(role)@")).connectionConfiguration()
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "listener"))
            defer { Task { try? await connection.close() } }
            let heard = Task {
                var payloads: [String] = []
                for try await notification in try await connection.listen("coffer_changes") {
                    payloads.append(notification.payload)
                    if payloads.count == 3 { break }
                }
                return payloads
            }
            try await Task.sleep(for: .milliseconds(300))  // LISTEN is in place
            let storage = PostgresStorage<String>(database: database, namespace: "sessions", key: "session-4711")
            try await storage.save(item: "refresh-token")
            _ = try await database.keys.rotateKey(for: "org.coffer.postgres.values")
            try await storage.delete()
            let payloads = try await heard.value
            #expect(payloads.count == 3)
            for payload in payloads {
                #expect(payload.utf8.count == 32 && payload.allSatisfy(\.isHexDigit), "\(payload)")
                for secretName in ["sessions", "session-4711", "org.coffer", "value", "keys"] { #expect(!payload.contains(secretName)) }
            }
            #expect(payloads[0] == payloads[2], "the same value's save and delete")
        }
    }
}
