import CofferAuthenticator
import Foundation
import TestSupport
import Testing

/// Issue 13.7: the `coffer` tool with `--backend postgres`, run as a user would, against a
/// fresh database on the throwaway server.
@Suite("coffer --backend postgres", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct PostgresToolTests {
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    /// A scratch data directory and a fresh database, with the tool configured for both.
    struct Setup {
        let directory = TemporaryDirectory()
        let url: String
        var environment: [String: String]

        init() async throws {
            url = try await TestPostgres.freshDatabase()
            environment = ["COFFER_HOME": directory.appending("home").path, "COFFER_DATABASE_URL": url]
        }

        func coffer(_ arguments: [String], input: String? = nil, _ extra: [String: String] = [:]) async throws -> CofferProcess.Result {
            try await CofferProcess.run(executable: try CofferProcess.executable, arguments, input: input,
                                        environment: environment.merging(extra) { $1 },
                                        removing: ["COFFER_BACKEND", "COFFER_DATABASE_KEK", "COFFER_OWNER", "DBUS_SESSION_BUS_ADDRESS"]
                                            .filter { extra[$0] == nil })
        }
    }

    @Test("every account command works on PostgreSQL; owners see only their own; doctor checks URL, key, connection, schema, key ring")
    func accountCommands() async throws {
        let setup = try await Setup()
        defer { setup.directory.remove() }
        let needsKey = try await setup.coffer(["list", "--backend", "postgres"])
        #expect(needsKey.status == 1 && needsKey.stderr.contains("coffer key new-kek"), "\(needsKey.stderr)")
        let made = try await setup.coffer(["key", "new-kek"])
        #expect(made.status == 0 && made.stdout.contains("fingerprint"), "\(made.stderr)")
        let kek = setup.directory.appending("home/keys/postgres.kek").path
        var info = stat()
        #expect(stat(kek, &info) == 0 && info.st_mode & 0o777 == 0o600, "the key-encryption key file is 0600")
        let again = try await setup.coffer(["key", "new-kek"])
        #expect(again.status == 1, "an existing key-encryption key is never replaced: \(again.stdout)")

        let postgres = ["--backend", "postgres"]
        #expect(try await setup.coffer(["add", "-"] + postgres, input: "otpauth://hotp/Bank:bob?secret=\(Self.secret)&counter=3\n").status == 0)
        #expect(try await setup.coffer(["add", "-"] + postgres, input: "otpauth://totp/GitHub:alice?secret=\(Self.secret)\n").status == 0)
        // RFC 4226's vectors for counters 3 and 4: the HOTP counter moves in the database.
        #expect(try await setup.coffer(["code", "Bank", "--raw"] + postgres).stdout == "969429\n")
        #expect(try await setup.coffer(["code", "Bank", "--raw"] + postgres).stdout == "338314\n")
        let listed = try await setup.coffer(["list"] + postgres)
        #expect(listed.stdout.contains("Bank: bob") && listed.stdout.contains("GitHub: alice"), "\(listed.stdout) \(listed.stderr)")
        #expect(try await setup.coffer(["rename", "GitHub:alice", "--issuer", "GH"] + postgres).status == 0)
        #expect(try await setup.coffer(["code", "GH", "--raw"] + postgres).stdout.count == 7)
        let duplicate = try await setup.coffer(["add", "-"] + postgres, input: "otpauth://totp/GitHub:alice?secret=\(Self.secret)\n")
        #expect(duplicate.status == 1 && duplicate.stderr.contains("--replace"), "never a silent replace: \(duplicate.stderr)")

        // Another owner shares the database and sees nothing of root's.
        let mallory = try await setup.coffer(["list"] + postgres, ["COFFER_OWNER": "mallory"])
        #expect(mallory.stderr.hasPrefix("No accounts yet") && mallory.stderr.contains("owner mallory"), "\(mallory.stderr)")
        #expect(try await setup.coffer(["code", "Bank"] + postgres, ["COFFER_OWNER": "mallory"]).status == 2, "nothing matched")

        // The secret is not in the database; the database is named without a password.
        #expect(try await TestPostgres.psql(setup.url, "SELECT count(*) FROM coffer_mechanisms WHERE position('\(Self.secret)'::bytea in secret) > 0") == "0")
        let doctor = try await setup.coffer(["doctor"], ["COFFER_DATABASE_URL": setup.url + "&password=hunter2-not-shown"])
        for check in ["postgres URL", "postgres key-encryption key", "postgres connection", "postgres schema", "postgres key ring", "postgres accounts"] {
            #expect(doctor.stdout.contains("ok    \(check)"), "\(check): \(doctor.stdout)")
        }
        #expect(!doctor.stdout.contains("hunter2") && !doctor.stderr.contains("hunter2"), "no password in doctor's report")

        let removed = try await setup.coffer(["remove", "Bank", "--yes"] + postgres)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try await TestPostgres.psql(setup.url, "SELECT count(*) FROM coffer_mechanisms") == "1")
    }

    @Test("doctor fails on another key-encryption key; a missing server or socket is one line, fast, exit 1")
    func failures() async throws {
        let setup = try await Setup()
        defer { setup.directory.remove() }
        #expect(try await setup.coffer(["key", "new-kek"]).status == 0)
        #expect(try await setup.coffer(["add", "-", "--backend", "postgres"], input: "otpauth://totp/Mail:a?secret=\(Self.secret)\n").status == 0)
        let other = setup.directory.appending("other.kek").path
        #expect(try await setup.coffer(["key", "new-kek", other]).status == 0)
        for command in [["list"], ["code", "Mail"], ["add", "-"]] {
            let wrong = try await setup.coffer(command + ["--backend", "postgres"], input: "otpauth://totp/New:a?secret=\(Self.secret)\n",
                                               ["COFFER_DATABASE_KEK": other])
            #expect(wrong.status == 1 && wrong.stderr.contains("key-encryption key"), "\(command): \(wrong.stdout) \(wrong.stderr)")
        }
        #expect(try await TestPostgres.psql(setup.url, "SELECT count(*) FROM coffer_mechanisms") == "1", "nothing written under another key")
        let doctor = try await setup.coffer(["doctor"], ["COFFER_DATABASE_KEK": other])
        #expect(doctor.stdout.contains("FAIL  postgres") && doctor.stdout.contains("only that owner's key-encryption key opens it"), "\(doctor.stdout)")

        // A read the database refuses (a role without SELECT on the mechanisms) is that
        // error, not "no account matches". (Row-level security shows the role only its own
        // account rows, so it has one of its own.)
        let role = "limited_\(UUID().uuidString.prefix(8).lowercased())"
        try await TestPostgres.psql(setup.url, """
            CREATE ROLE \(role) LOGIN; GRANT SELECT ON coffer_schema, coffer_keys, coffer_accounts TO \(role);
            INSERT INTO coffer_accounts (owner, issuer, account_name, time_added, is_locked) VALUES ('\(role)', 'Mail', 'a', 0, false)
            """)
        let refused = try await setup.coffer(["code", "Mail", "--backend", "postgres"],
                                             ["COFFER_DATABASE_URL": setup.url.replacingOccurrences(of: "postgres@", with: "\(role)@"),
                                              "COFFER_OWNER": role])
        #expect(refused.status == 1 && refused.stderr.contains("refused") && refused.stderr.contains("42501"), "\(refused.stderr)")

        let gone = try await setup.coffer(["list", "--backend", "postgres"], ["COFFER_DATABASE_URL": "postgresql://postgres@/x?host=/nonexistent"])
        #expect(gone.status == 69 && gone.stderr.contains("no PostgreSQL server is listening at /nonexistent/.s.PGSQL.5432"), "\(gone.stderr)")
        #expect(gone.elapsed < .seconds(5), "no connect timeout for a socket that is not there")
        #expect(gone.stderr.split(separator: "\n").count == 1)
        let bad = try await setup.coffer(["list", "--backend", "postgres"], ["COFFER_DATABASE_URL": "mysql://x"])
        #expect(bad.status == 1 && bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
    }

    @Test("migrate --to postgres moves every account with its HOTP counter, verifies, then empties the source; plain commands follow")
    func migrate() async throws {
        let setup = try await Setup()
        defer { setup.directory.remove() }
        #expect(try await setup.coffer(["key", "new-kek"]).status == 0)
        #expect(try await setup.coffer(["add", "-"], input: "otpauth://hotp/Bank:bob?secret=\(Self.secret)&counter=3\n").status == 0)
        #expect(try await setup.coffer(["add", "-"], input: "otpauth://totp/GitHub:alice?secret=\(Self.secret)\n").status == 0)
        #expect(try await setup.coffer(["code", "Bank", "--raw"]).stdout == "969429\n")
        let moved = try await setup.coffer(["migrate", "--to", "postgres"])
        #expect(moved.status == 0 && moved.stdout.contains("Moved 2 account(s), 2 mechanism(s)"), "\(moved.stdout) \(moved.stderr)")
        #expect(try await setup.coffer(["list", "--backend", "sqlite"]).stderr.hasPrefix("No accounts yet"), "the source is emptied")
        #expect(try await setup.coffer(["code", "Bank", "--raw"]).stdout == "338314\n", "the counter moved along; plain code follows")
        // A second migrate finds the accounts already there: nothing replaced, nothing lost.
        #expect(try await setup.coffer(["add", "-", "--backend", "sqlite"], input: "otpauth://totp/GitHub:alice?secret=\(Self.secret)\n").status == 0)
        let clash = try await setup.coffer(["migrate", "--backend", "sqlite", "--to", "postgres"])
        #expect(clash.status == 1, "\(clash.stdout) \(clash.stderr)")
        #expect(try await setup.coffer(["list", "--backend", "sqlite"]).stdout.contains("GitHub: alice"), "left in the source")
        #expect(try await TestPostgres.psql(setup.url, "SELECT count(*) FROM coffer_mechanisms") == "2")
    }

    @Test("migrate --backend keychain --to postgres: the keyring's accounts move, counters along, and the keyring is emptied",
          .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
    func migrateFromKeychain() async throws {
        try await SharedKeyringAccounts.exclusively {
            let setup = try await Setup()
            defer { setup.directory.remove() }
            let bus = ["DBUS_SESSION_BUS_ADDRESS": ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""]
            let issuer = "Keyring\(UUID().uuidString.prefix(6))"
            // A secret of this test's own: the keyring's HOTP counter ledger is shared by the whole run.
            let secret = TestSecret.random()
            let fourth = try OathGenerator.hotp(secret: Base32.decode(secret), counter: 3)
            #expect(try await setup.coffer(["key", "new-kek"]).status == 0)
            let added = try await setup.coffer(["add", "-", "--backend", "keychain"], input: "otpauth://hotp/\(issuer):m?secret=\(secret)&counter=3\n", bus)
            #expect(added.status == 0, "\(added.stderr)")
            let moved = try await setup.coffer(["migrate", "--backend", "keychain", "--to", "postgres"], bus)
            #expect(moved.status == 0 && moved.stdout.contains("mechanism(s)"), "\(moved.stdout) \(moved.stderr)")
            #expect(try await setup.coffer(["code", issuer, "--raw"], bus).stdout == fourth + "\n", "plain code follows to postgres")
            #expect(try await setup.coffer(["code", issuer, "--raw", "--backend", "keychain"], bus).status == 2, "gone from the keyring")
        }
    }

    /// Issue 30, point 5: the counter memory is the database's, so it holds on every instance.
    @Test("R13: a HOTP secret removed and added again on PostgreSQL goes on from its counter, from another data directory too")
    func counterMemory() async throws {
        let setup = try await Setup()
        defer { setup.directory.remove() }
        #expect(try await setup.coffer(["key", "new-kek"]).status == 0)
        let postgres = ["--backend", "postgres"]
        let uri = "otpauth://hotp/Bank:bob?secret=\(Self.secret)&issuer=Bank&counter=0\n"
        #expect(try await setup.coffer(["add", "-"] + postgres, input: uri).status == 0)
        #expect(try await setup.coffer(["code", "Bank", "--raw"] + postgres).stdout == "755224\n")
        #expect(try await setup.coffer(["code", "Bank", "--raw"] + postgres).stdout == "287082\n")
        #expect(try await setup.coffer(["remove", "Bank", "--yes"] + postgres).status == 0)
        #expect(try await TestPostgres.psql(setup.url, "SELECT count(*) FROM coffer_hotp_counters WHERE position('\(Self.secret)'::bytea in ledger) = 0") == "1",
                "one sealed row for the owner")
        // Another instance: its own data directory, the same database and key-encryption key.
        let other = setup.directory.appending("other")
        let kek = setup.directory.appending("home/keys/postgres.kek").path
        let readded = try await setup.coffer(["add", "-"] + postgres, input: uri, ["COFFER_HOME": other.path, "COFFER_DATABASE_KEK": kek])
        #expect(readded.status == 0 && readded.stderr.contains("goes on from 2, not 0"), "\(readded.stderr)")
        #expect(try await setup.coffer(["code", "Bank", "--raw"] + postgres).stdout == "359152\n", "counter 2, never 0 again")
        ReliabilityReport.record("R13", "HOTP secret removed and added again on PostgreSQL from another data directory",
                                 tried: "1 re-add", outcome: "went on from counter 2")
    }

    @Test("4 processes × 10 `coffer code` of one HOTP account on PostgreSQL: 40 codes, each counter 0–39 once")
    func concurrentCodes() async throws {
        let setup = try await Setup()
        defer { setup.directory.remove() }
        #expect(try await setup.coffer(["key", "new-kek"]).status == 0)
        #expect(try await setup.coffer(["add", "-", "--backend", "postgres"], input: "otpauth://hotp/Bank:bob?secret=\(Self.secret)&counter=0\n").status == 0)
        let codes = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var codes: [String] = []
                    for _ in 0..<10 {
                        let result = try await setup.coffer(["code", "Bank", "--raw", "--backend", "postgres"])
                        #expect(result.status == 0, "\(result.stderr)")
                        codes.append(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
                    }
                    return codes
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let secret = try Base32.decode(Self.secret)
        let expected = try (0..<40).map { try OathGenerator.hotp(secret: secret, counter: UInt64($0)) }
        #expect(codes.sorted() == expected.sorted(), "every counter value used exactly once")
        #expect(try await TestPostgres.psql(setup.url, "SELECT counter FROM coffer_mechanisms") == "40")
    }
}
