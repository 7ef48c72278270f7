import CofferAuthenticator
import CofferPostgres
import CofferPostgresAuthenticator
import CofferStorage
import Foundation
import PostgresNIO
import TestSupport
import Testing

/// The attack review of issue 13 (helper 4): each finding kept as the attempt that found it.
@Suite("PostgreSQL attacks", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct PostgresAttackTests {
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    @Test("HOTP codes issued from the source while migrate --to postgres copies 300 accounts are not issued again from the target")
    func migrateWhileIssuingCodes() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try await TestPostgres.freshDatabase()
        let environment = ["COFFER_HOME": directory.appending("home").path, "COFFER_DATABASE_URL": url]
        @Sendable func coffer(_ arguments: [String], input: String? = nil) async throws -> CofferProcess.Result {
            try await CofferProcess.run(executable: try CofferProcess.executable, arguments, input: input, environment: environment,
                                        removing: ["COFFER_BACKEND", "COFFER_DATABASE_KEK", "COFFER_OWNER", "DBUS_SESSION_BUS_ADDRESS"])
        }
        #expect(try await coffer(["key", "new-kek"]).status == 0)
        let uris = ["otpauth://hotp/Bank:bob?secret=\(Self.secret)&counter=0"]
            + (0..<300).map { "otpauth://totp/Site\($0):user?secret=JBSWY3DPEHPK3PXP" }
        let imported = try await coffer(["import", "-", "--backend", "sqlite"], input: uris.joined(separator: "\n") + "\n")
        #expect(imported.status == 0, "\(imported.stderr)")

        async let migrated = coffer(["migrate", "--backend", "sqlite", "--to", "postgres"])
        var codes: [String] = []
        // Codes from the source for as long as it has the account (until migrate removes it).
        for _ in 0..<200 {
            let result = try await coffer(["code", "Bank:bob", "--raw", "--backend", "sqlite"])
            guard result.status == 0 else { break }
            codes.append(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let migration = try await migrated
        #expect(migration.status == 0, "\(migration.stdout) \(migration.stderr)")
        for _ in 0..<3 {
            codes.append(try await coffer(["code", "Bank:bob", "--raw"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(Set(codes).count == codes.count, "a code issued twice: \(codes)")
        let secret = try Base32.decode(Self.secret)
        #expect(codes == (0..<codes.count).map { try! OathGenerator.hotp(secret: secret, counter: UInt64($0)) }, "in counter order, none skipped")
    }

    @Test("a trigger that skips or undoes the counter update gives a typed error at once: no endless retry, no code twice",
          arguments: ["RETURN NULL", "RETURN OLD"])
    func counterUpdateSwallowed(trigger: String) async throws {
        try await TestPostgres.withDatabase { database, url in
            let client = PostgresStorageClient(database: database, owner: "bob")
            let hotp = Mechanism(issuer: "Bank", accountName: "bob", type: .hotp, secret: Self.secret)
            try await client.insert(hotp)
            // Each update the trigger sees takes a number from a sequence, which no rollback returns:
            // how many times the client tried, counted by the database, not by a clock.
            try await TestPostgres.psql(url, """
                CREATE SEQUENCE update_attempts;
                CREATE FUNCTION keep_counter() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('update_attempts'); \(trigger); END $$;
                CREATE TRIGGER keep_counter BEFORE UPDATE ON coffer_mechanisms FOR EACH ROW EXECUTE FUNCTION keep_counter();
                """)
            await #expect { _ = try await client.advanceCounter(of: hotp.mechanismUUID) } throws: { error in
                (error as? PostgresStorageError)?.code == .server && "\(error)".contains("no code was issued")
            }
            let attempts = Int(try await TestPostgres.psql(url, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM update_attempts")) ?? -1
            #expect((1...3).contains(attempts), "bounded, not a loop: \(attempts) updates tried")
            #expect(try await TestPostgres.psql(url, "SELECT counter FROM coffer_mechanisms") == "0")
        }
    }

    @Test("a socket another local user made in a shared directory is refused, naming its owner; requirepeer names a real one",
          .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
    func plantedSocket() async throws {
        let planted = try await SecondUser.plantDirectory(mode: "1777")
        defer { try? FileManager.default.removeItem(at: planted) }
        let socket = planted.appendingPathComponent(".s.PGSQL.5432").path
        let made = try await SecondUser.run("/usr/bin/python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('\(socket)')\"")
        try #require(made.status == 0, "\(made.stderr)")
        let url = try PostgresConnectionURL("postgresql://coffer@/coffer?host=\(planted.path)")
        #expect { try url.checkSocket() } throws: { error in
            (error as? PostgresStorageError)?.code == .invalidConfiguration && "\(error)".contains("belongs to \(SecondUser.name)")
        }
        #expect(throws: PostgresStorageError.self) { _ = try CofferDatabase(configuration: .init(url: url, keyEncryptionKey: .random())) }
        let named = try PostgresConnectionURL("postgresql://coffer@/coffer?host=\(planted.path)&requirepeer=\(SecondUser.name)")
        try named.checkSocket()

        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let tool = try await CofferProcess.run(executable: try CofferProcess.executable, ["list", "--backend", "postgres"], environment: [
            "COFFER_HOME": directory.appending("home").path, "COFFER_DATABASE_URL": "postgresql://coffer@/coffer?host=\(planted.path)",
            "COFFER_DATABASE_KEK": directory.appending("kek").path,
        ])
        #expect(tool.status == 1 && tool.stderr.contains("belongs to \(SecondUser.name)"), "\(tool.stderr)")
    }

    @Test("display names a database user set to escape sequences and forged lines are printed escaped; rename refuses control characters")
    func escapedNames() async throws {
        let tool = try await Tool()
        defer { tool.directory.remove() }
        let url = tool.url
        #expect(try await tool.coffer(["add", "-"], input: "otpauth://totp/Bank:bob?secret=\(Self.secret)\n").status == 0)
        try await TestPostgres.psql(url, "UPDATE coffer_accounts SET display_issuer = E'Evil\\x1b[2J\\nForged: line'")
        for command in [["list"], ["code"]] {
            let output = try await tool.coffer(command).stdout
            #expect(!output.contains("\u{1B}") && !output.contains("\nForged"), "\(command): \(output)")
            #expect(output.contains("Evil\\u{1b}[2J\\u{a}Forged: line"), "\(command): \(output)")
        }
        let rename = try await tool.coffer(["rename", "Bank:bob", "--issuer", "a\u{1B}[31mb"])
        #expect(rename.status == 64 && rename.stderr.contains("control characters"), "\(rename.stderr)")
    }

    @Test("5: a locking policy and a changed mechanism_uuid set by a database user are printed escaped by list, code and doctor")
    func escapedPolicyAndIDs() async throws {
        let tool = try await Tool()
        defer { tool.directory.remove() }
        let url = tool.url
        #expect(try await tool.coffer(["add", "-"], input: "otpauth://totp/Bank:bob?secret=\(Self.secret)\n").status == 0)
        #expect(try await tool.coffer(["add", "-"], input: "otpauth://totp/Mail:bob?secret=\(Self.secret)\n").status == 0)
        try await TestPostgres.psql(url, """
            UPDATE coffer_accounts SET is_locked = true, locking_policy = E'p\\x1b]0;owned\\x07\\x1b[2J' WHERE issuer = 'Bank';
            ALTER TABLE coffer_mechanisms DROP CONSTRAINT coffer_mechanisms_owner_issuer_account_name_fkey;
            UPDATE coffer_mechanisms SET mechanism_uuid = E'u\\x1b]0;owned\\x07' || U&'\\202E' WHERE issuer = 'Mail';
            """)
        var seen = ""
        for command in [["list"], ["list", "--json"], ["code"], ["code", "bank"], ["doctor"]] {
            let result = try await tool.coffer(command)
            for text in [result.stdout, result.stderr] {
                let raw = text.unicodeScalars.filter { TerminalText.isControl($0) && $0 != "\n" && $0 != "\t" }
                #expect(raw.isEmpty, "\(command): \(raw.map { String($0.value, radix: 16) })")
            }
            seen += result.stdout + result.stderr
        }
        #expect(seen.contains("by the policy 'p\\u{1b}]0;owned\\u{7}"), "\(seen)")
        #expect(seen.contains("u\\u{1b}]0;owned\\u{7}\\u{202e}"), "\(seen)")
    }

    /// A fresh database and data directory, and the tool on them (`--backend postgres` by the
    /// environment) with a key-encryption key made.
    struct Tool {
        let directory = TemporaryDirectory()
        let url: String

        init() async throws {
            url = try await TestPostgres.freshDatabase()
            #expect(try await coffer(["key", "new-kek"]).status == 0)
        }

        @Sendable func coffer(_ arguments: [String], input: String? = nil) async throws -> CofferProcess.Result {
            try await CofferProcess.run(executable: try CofferProcess.executable, arguments, input: input,
                                        environment: ["COFFER_HOME": directory.appending("home").path, "COFFER_DATABASE_URL": url,
                                                      "COFFER_BACKEND": "postgres"],
                                        removing: ["COFFER_DATABASE_KEK", "COFFER_OWNER", "DBUS_SESSION_BUS_ADDRESS"])
        }
    }

    @Test("a key-encryption key file of 200 MB is refused unread")
    func hugeKeyFile() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("huge.kek").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 200 << 20)
        try handle.close()
        #expect { _ = try KeyEncryptionKey.load(fromFile: path) } throws: { "\($0)".contains("more than a key file holds") }
    }
}
