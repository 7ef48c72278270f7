import CofferAuthenticator
import Foundation
import CofferStorage
import TestSupport
import Testing

/// The `coffer` account commands, run as a process with a throwaway data directory and no
/// keyring (so the key goes to a 0600 file).
@Suite("coffer add / list / code / remove / rename")
struct CofferAccountsToolTests {
    let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    func coffer(_ directory: TemporaryDirectory) -> CofferProcess { CofferProcess(dataDirectory: directory.url) }

    @discardableResult
    func run(_ tool: CofferProcess, _ arguments: [String], input: String? = nil) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: try CofferProcess.executable, arguments, input: input,
            environment: ["COFFER_HOME": tool.dataDirectory.path], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
    }

    @Test("add, list and code: the TOTP code is the library's at the same time step")
    func addListCode() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let tool = coffer(directory)
        let added = try await run(tool, ["add", "otpauth://totp/Example:alice?secret=\(secret)&issuer=Example"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "Added Example: alice (TOTP)\n")
        #expect(try await run(tool, ["list"]).stdout == "Example: alice  TOTP\n", "into a pipe: one account per line, no header")

        let before = Date()
        let code = try await run(tool, ["code", "example", "--json"])
        let after = Date()
        let outputs = try JSONSerialization.jsonObject(with: Data(code.stdout.utf8)) as? [[String: Any]]
        let printed = try #require(outputs?.first?["code"] as? String)
        let candidates = try Set([before, after].map { try OathGenerator.totp(secret: Base32.decode(secret), at: $0).code })
        #expect(candidates.contains(printed))
        #expect((outputs?.first?["secondsRemaining"] as? Int).map { (1...30).contains($0) } == true)

        #expect(try permissions(of: directory.appending("authenticator.sqlite")) == 0o600)
        #expect(try permissions(of: directory.appending("keys")) == 0o700)
        #expect(try String(contentsOf: directory.appending("authenticator.keystore"), encoding: .utf8) == "file\n")
        let database = try Data(contentsOf: directory.appending("authenticator.sqlite"))
        #expect(database.range(of: Data(secret.utf8)) == nil, "the secret is sealed on disk")
    }

    @Test("a HOTP counter advances across runs; typed-in accounts work; --show-secret warns")
    func hotpAcrossRuns() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let tool = coffer(directory)
        let added = try await run(tool, ["add", "--type", "hotp", "--counter", "0", "--issuer", "Bank", "--account", "bob", "--secret", secret])
        #expect(added.status == 0, "\(added.stderr)")
        var codes: [String] = []
        for _ in 0..<3 { codes.append(try await run(tool, ["code", "bank"]).stdout) }
        #expect(codes == ["Bank: bob  755224\n", "Bank: bob  287082\n", "Bank: bob  359152\n"], "RFC 4226 values, one per run")
        let list = try await run(tool, ["list", "--show-secret"])
        #expect(list.stdout.contains(secret))
        #expect(list.stderr.contains("warning: secrets are printed"))
        #expect(!(try await run(tool, ["list", "--json"])).stdout.contains(secret), "no secrets without --show-secret")
    }

    @Test("errors are one line with a non-zero status: bad URI, duplicate, no match, ambiguous remove")
    func errors() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let tool = coffer(directory)
        let bad = try await run(tool, ["add", "otpauth://totp/A:b?secret=JBSW1&issuer=A"])
        #expect(bad.status == 1)
        #expect(bad.stderr.hasPrefix("coffer: The URI's 'secret' parameter is invalid"))
        #expect(bad.stderr.filter { $0 == "\n" }.count == 1)

        try await run(tool, ["add", "otpauth://totp/Example:alice?secret=\(secret)&issuer=Example"])
        try await run(tool, ["add", "otpauth://totp/Example:alan?secret=\(secret)&issuer=Example"])
        let duplicate = try await run(tool, ["add", "otpauth://totp/Example:alice?secret=\(secret)&issuer=Example"])
        #expect(duplicate.status == 1 && duplicate.stderr.contains("already has a TOTP mechanism"))

        let none = try await run(tool, ["code", "nothing-like-this"])
        #expect(none.status == 2 && none.stderr.contains("no account with a code matches"))

        let ambiguous = try await run(tool, ["remove", "example", "--yes"])
        #expect(ambiguous.status == 3)
        #expect(ambiguous.stderr.contains("matches 2 accounts") && ambiguous.stderr.contains("nothing was removed"))
        #expect(try await run(tool, ["list"]).stdout.split(separator: "\n").count == 2, "the 2 accounts, one per line")
    }

    @Test("remove asks first; rename changes only the names shown")
    func removeAndRename() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let tool = coffer(directory)
        try await run(tool, ["add", "otpauth://totp/Example:alice?secret=\(secret)&issuer=Example"])
        #expect(try await run(tool, ["rename", "alice", "--issuer", "Example (work)"]).stdout.hasPrefix("Renamed to Example (work): alice. coffer restore "))
        #expect(try await run(tool, ["code", "Example:alice"]).status == 0, "the identity is unchanged")

        let declined = try await run(tool, ["remove", "alice"], input: "n\n")
        #expect(declined.status == 1 && declined.stderr == "coffer: nothing was removed\n", "declining is not success")
        #expect(try await run(tool, ["list"]).stdout.contains("alice"))
        let confirmed = try await run(tool, ["remove", "alice"], input: "y\n")
        #expect(confirmed.stdout.contains("Removed Example (work): alice."))
        #expect(try await run(tool, ["list"]).stderr.hasPrefix("No accounts yet"))
    }

    @Test("a store whose key is recorded in the keyring says so when the keyring is gone, and changes nothing")
    func recordedKeyringRequired() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try "secret-service\n".write(to: directory.appending("authenticator.keystore"), atomically: true, encoding: .utf8)
        let result = try await run(coffer(directory), ["list"])
        #expect(result.status == 69, "the keyring is unavailable")
        #expect(result.stderr.hasPrefix("coffer: Run coffer in your desktop session, or run `coffer key move --to file` there once"), "\(result.stderr)")
        #expect(result.stderr.contains("this session has no D-Bus session bus") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("authenticator.sqlite").path))
    }
}

@Suite("coffer doctor")
struct CofferDoctorTests {
    func doctor(_ directory: TemporaryDirectory, keyring: Bool = false) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: try CofferProcess.executable, ["doctor"], environment: ["COFFER_HOME": directory.appending("home").path],
            removing: keyring ? [] : ["DBUS_SESSION_BUS_ADDRESS"])
    }

    func add(_ directory: TemporaryDirectory) async throws {
        let added = try await CofferProcess.run(
            executable: try CofferProcess.executable, ["add", "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example"],
            environment: ["COFFER_HOME": directory.appending("home").path], removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(added.status == 0, "\(added.stderr)")
    }

    @Test("a healthy store without a keyring: ok, with notes about the keyring")
    func healthy() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await add(directory)
        let result = try await doctor(directory)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("note  keyring: The OS keyring (Secret Service) cannot be used: there is no D-Bus session bus"))
        #expect(result.stdout.contains("ok    database: ") && result.stdout.contains("passes PRAGMA integrity_check"))
        #expect(result.stdout.contains("ok    accounts: 1 account(s)"))
        #expect(result.stdout.contains("ok    key file: ") && result.stdout.contains("org.coffer.authenticator.key (owner uid \(geteuid()), mode 600)"))
        #expect(result.stdout.contains("ok    data directory: ") && result.stdout.contains("mode 700)"), "coffer made it 0700")
    }

    @Test("a data directory others can write to, and secrets the recorded key cannot open, fail")
    func failures() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await add(directory)
        let home = directory.appending("home")
        try FileManager.default.setAttributes([.posixPermissions: 0o775], ofItemAtPath: home.path)
        let open = try await doctor(directory)
        #expect(open.status == 1)
        #expect(open.stdout.contains("FAIL  data directory: ") && open.stdout.contains("mode 775") && open.stdout.contains("chmod go-w"))
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.path)
        // Another key under the same alias: the stored secret no longer opens.
        try FileManager.default.removeItem(at: home.appendingPathComponent("keys"))
        try await FileKeyStore(directory: home.appendingPathComponent("keys")).createKey(for: DefaultAuthenticatorStorage.keyAlias)
        let result = try await doctor(directory)
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAIL  accounts: 1 account(s), 1 stored record(s) cannot be read, left as they are: mechanism "), "\(result.stdout)")
        #expect(result.stdout.contains("FAIL  key check: the key does not open this store"))
    }

    @Test("with the test keyring, doctor sees it", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
    func withKeyring() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let result = try await doctor(directory, keyring: true)
        #expect(result.stdout.contains("ok    keyring: a Secret Service provider answers"), "\(result.stdout)")
    }
}

@Suite("coffer import / export")
struct CofferVaultToolTests {
    @discardableResult
    func run(_ home: URL, _ arguments: [String], password: String? = nil) async throws -> CofferProcess.Result {
        var environment = ["COFFER_HOME": home.path]
        if let password { environment["COFFER_PASSWORD"] = password }
        return try await CofferProcess.run(
            executable: try CofferProcess.executable, arguments, environment: environment,
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"] + (password == nil ? ["COFFER_PASSWORD"] : []))
    }

    @Test("add, export encrypted, remove all, import: the same codes; wrong password and damage change nothing")
    func roundTrip() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        let vault = directory.appending("backup.json").path
        for uri in ["otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example",
                    "otpauth://totp/Other:bob?secret=JBSWY3DPEHPK3PXP&issuer=Other&digits=8"] {
            #expect(try await run(home, ["add", uri]).status == 0)
        }
        let exported = try await run(home, ["export", vault, "--format", "aegis", "--encrypt"], password: "vault password")
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(try permissions(of: URL(fileURLWithPath: vault)) == 0o600)
        #expect(!(try String(contentsOfFile: vault, encoding: .utf8)).contains("GEZDGNBV"), "the secrets are sealed")
        // Codes at one fixed time: a loaded machine may take minutes between the two readings.
        let before = try await run(home, ["code", "--json", "--at", "@1000000000"]).stdout

        for query in ["Example:alice", "Other:bob"] { #expect(try await run(home, ["remove", query, "--yes"]).status == 0) }
        let wrong = try await run(home, ["import", vault, "--format", "aegis"], password: "not it")
        #expect(wrong.status == 1 && wrong.stderr.contains("does not open the vault"))
        #expect(try await run(home, ["list"]).stderr.hasPrefix("No accounts yet"), "a wrong password imports nothing")

        var damaged = try Data(contentsOf: URL(fileURLWithPath: vault))
        damaged.removeLast(40)
        let damagedPath = directory.appending("damaged.json").path
        try damaged.write(to: URL(fileURLWithPath: damagedPath))
        let broken = try await run(home, ["import", damagedPath], password: "vault password")
        #expect(broken.status == 1 && broken.stderr.contains("Nothing was imported"))

        let imported = try await run(home, ["import", vault, "--format", "aegis"], password: "vault password")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.hasPrefix("Imported 2 account(s) from the Aegis vault."))
        let after = try await run(home, ["code", "--json", "--at", "@1000000000"]).stdout
        func codes(_ json: String) throws -> [String] {
            ((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]]) ?? []).compactMap { $0["code"] as? String }.sorted()
        }
        #expect(try codes(before) == codes(after) && codes(after).count == 2, "the same secrets: \(before) \(after)")

        let twice = try await run(home, ["import", vault], password: "vault password")
        #expect(twice.stdout.contains("already there (the same secret): Example: alice (totp)") && twice.status == 0)
        let noPassword = try await run(home, ["import", vault])
        #expect(noPassword.status == 1 && noPassword.stderr.contains("give --password-file or set COFFER_PASSWORD"))
    }

    @Test("the CLI imports a vault written by an independent implementation")
    func independentVault() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let vault = directory.appending("fixture.json").path
        let script = TestKeyring.root.appendingPathComponent("Tests/Helpers/make-aegis-vault.py").path
        let made = try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/python3"), [script, vault, "pw"])
        try #require(made.status == 0, "\(made.stderr)")
        let home = directory.appending("home")
        let imported = try await run(home, ["import", vault, "--format", "aegis"], password: "pw")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("Imported 3 account(s) from the Aegis vault."))
        #expect(imported.stdout.contains("  imported: Steam: gamer (steam)"), "Steam Guard entries import")
        #expect(try await run(home, ["code", "bank"]).stdout == "Bank: bob  254676\n", "RFC 4226 counter 5")
    }

    @Test("at a terminal the password is asked for with echo off", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) from util-linux for a pseudo-terminal"))
    func passwordPrompt() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        try await run(home, ["add", "otpauth://totp/P:q?secret=JBSWY3DPEHPK3PXP&issuer=P"])
        let vault = directory.appending("v.json").path
        try await run(home, ["export", vault, "--encrypt"], password: "typed-secret")
        try await run(home, ["remove", "P:q", "--yes"])
        // A pseudo-terminal; the password is typed once the prompt is on it.
        let typed = try await PseudoTerminal.run(
            "'\(try CofferProcess.executable.path)' import '\(vault)'",
            typing: [.init(after: "Password of the Aegis vault: ", type: "typed-secret\n")],
            environment: ["COFFER_HOME": home.path], removing: ["COFFER_PASSWORD", "DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
        #expect(typed.stdout.contains("Password of the Aegis vault: "), "\(typed.stdout)")
        #expect(typed.stdout.contains("Imported 1 account(s) from the Aegis vault."))
        #expect(!typed.stdout.contains("typed-secret"), "the password is not echoed")
    }

    @Test("--password-file, and a plain export warns")
    func passwordFileAndPlainExport() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        try await run(home, ["add", "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example"])
        let passwordFile = directory.appending("password")
        try "from a file\n".write(to: passwordFile, atomically: true, encoding: .utf8)
        let vault = directory.appending("v.json").path
        #expect(try await run(home, ["export", vault, "--encrypt", "--password-file", passwordFile.path]).status == 0)
        _ = try AegisVault.read(Data(contentsOf: URL(fileURLWithPath: vault)), password: "from a file")
        let plain = try await run(home, ["export", directory.appending("plain.json").path])
        #expect(plain.stderr.contains("warning: the vault is not encrypted"))
    }
}
