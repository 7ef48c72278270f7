import CofferAuthenticator
import CofferStorage
import Foundation
import GRDB
import TestSupport
import Testing

/// R8 against the `coffer` tool, run as processes: concurrent processes (items 3, 4), another
/// local user's directory (5), exports (7), key loss (2), secrets and passwords (13, 14).
@Suite("R8 attacks on the coffer tool")
struct ToolProcessAttackTests {
    static let codesPerProcess = Int(ProcessInfo.processInfo.environment["COFFER_R8_CODES"] ?? "") ?? 10
    // A secret of this test's own: the keyring's HOTP counter ledger is shared by the whole run.
    let secret = TestSecret.random()

    @discardableResult
    func coffer(_ home: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: try CofferProcess.executable, arguments, input: input,
            environment: ["COFFER_HOME": home.path].merging(environment) { $1 },
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"] + (environment["COFFER_PASSWORD"] == nil ? ["COFFER_PASSWORD"] : []))
    }

    @Test("3: four processes adding the same account at once: exactly one succeeds, the others say it exists")
    func concurrentAdds() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["list"])  // the store and its key exist before the race
        for round in 0..<3 {
            let uri = "otpauth://totp/Race\(round):alice?secret=\(secret)&issuer=Race\(round)"
            let results = try await withThrowingTaskGroup(of: CofferProcess.Result.self) { group in
                for _ in 0..<4 { group.addTask { try await coffer(directory.url, ["add", "-"], input: uri + "\n") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { $0.status == 0 }.count == 1, "\(results.map(\.stderr))")
            #expect(results.filter { $0.status != 0 }.allSatisfy { $0.stderr.contains("already has") })
        }
    }

    @Test("4: N processes × M HOTP codes: N·M distinct codes, the counter at N·M")
    func concurrentHOTP() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let added = try await coffer(directory.url, ["add", "-"], input: "otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank&counter=0\n")
        #expect(added.status == 0, "\(added.stderr)")
        let perProcess = Self.codesPerProcess
        let codes = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var mine: [String] = []
                    for _ in 0..<perProcess { mine.append(try await coffer(directory.url, ["code", "bank"]).stdout) }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let expected = try Set((0..<UInt64(4 * perProcess)).map {
            "Bank: bob  " + (try OathGenerator.hotp(secret: Base32.decode(secret), counter: $0)) + "\n"
        })
        #expect(codes.count == 4 * perProcess)
        #expect(Set(codes).count == codes.count, "no code twice")
        #expect(Set(codes) == expected, "exactly the codes for counters 0..<\(4 * perProcess)")
        let list = try await coffer(directory.url, ["list", "--json"])
        #expect(list.stdout.contains("\"counter\" : \(4 * perProcess)"))
        ReliabilityReport.record("R8", "4 processes issuing HOTP codes from one store at once", tried: "4 × \(perProcess) codes",
                                 outcome: "\(Set(codes).count) distinct of \(codes.count), counter at \(4 * perProcess)")
    }

    @Test("4: the keyring client too: N processes × M HOTP codes give N·M distinct codes",
          .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
    func concurrentKeyringHOTP() async throws {
        try await SharedKeyringAccounts.exclusively { try await keyringHOTP() }
    }

    func keyringHOTP() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // The keyring is shared by the whole suite: an issuer no other test uses.
        let issuer = "Race\(UUID().uuidString.prefix(8))"
        func keyring(_ arguments: [String], input: String? = nil) async throws -> CofferProcess.Result {
            try await CofferProcess.run(executable: try CofferProcess.executable, arguments, input: input,
                                        environment: ["COFFER_HOME": directory.url.path, "COFFER_BACKEND": "keychain"],
                                        removing: ["COFFER_PASSWORD"])
        }
        let added = try await keyring(["add", "-"], input: "otpauth://hotp/\(issuer):bob?secret=\(secret)&issuer=\(issuer)&counter=0\n")
        #expect(added.status == 0, "\(added.stderr)")
        let perProcess = max(2, Self.codesPerProcess / 2)
        let codes = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var mine: [String] = []
                    for _ in 0..<perProcess {
                        let result = try await keyring(["code", issuer])
                        #expect(result.status == 0, "\(result.stderr)")
                        mine.append(result.stdout)
                    }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let expected = try Set((0..<UInt64(4 * perProcess)).map {
            "\(issuer): bob  " + (try OathGenerator.hotp(secret: Base32.decode(secret), counter: $0)) + "\n"
        })
        #expect(Set(codes).count == codes.count, "no code twice: \(codes)")
        #expect(Set(codes) == expected, "exactly the codes for counters 0..<\(4 * perProcess)")
        #expect(try await keyring(["list", "--json"]).stdout.contains("\"counter\" : \(4 * perProcess)"))
        #expect(try await keyring(["remove", issuer, "--yes"]).status == 0)
        ReliabilityReport.record("R8", "4 processes issuing HOTP codes from one keyring account at once", tried: "4 × \(perProcess) codes",
                                 outcome: "\(Set(codes).count) distinct of \(codes.count)")
    }

    @Test("14: Ctrl-C or SIGTERM at the password prompt puts the terminal back with echo on",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) from util-linux for a pseudo-terminal"))
    func interruptedPrompt() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Bank:alice?secret=\(secret)&issuer=Bank\n")
        let vault = directory.appending("vault.json").path
        let exported = try await coffer(directory.url, ["export", vault, "--encrypt"], environment: ["COFFER_PASSWORD": "correct horse"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let coffer = try CofferProcess.executable.path
        // Inside script(1)'s pseudo-terminal, bash runs coffer at its prompt, then records the
        // terminal's settings: once after Ctrl-C typed at the terminal (the line discipline
        // sends SIGINT to the foreground group; bash's trap runs after coffer has died of it),
        // once after `kill -TERM`. Each signal waits for its prompt to be on the terminal (the
        // session's output is copied to a file both sides read), never for a time: on a loaded
        // machine coffer may take seconds to ask.
        let settings = [directory.appending("after-int").path, directory.appending("after-term").path]
        let typescript = directory.appending("typescript").path
        let prompts = "$(grep -o 'Password of the Aegis vault:' '\(typescript)' | wc -l)"
        func waitFor(_ count: Int) -> String {
            "for i in $(seq 600); do [ \(prompts) -ge \(count) ] && break; sleep 0.1; done"
        }
        let inner = """
            trap 'stty -a > \(settings[0])' INT
            '\(coffer)' import '\(vault)'
            trap - INT
            '\(coffer)' import '\(vault)' < /dev/tty & pid=$!
            \(waitFor(2)); kill -TERM $pid; wait $pid; stty -a > \(settings[1])
            echo INNER-DONE
            """
        let script = directory.appending("inner.sh")
        try Data(inner.utf8).write(to: script)
        let feeder = "(\(waitFor(1)); printf '\\003'; for i in $(seq 600); do grep -q INNER-DONE '\(typescript)' && break; sleep 0.1; done)"
        let result = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"),
            ["-c", "\(feeder) | script -qec \"bash $0\" /dev/null > '\(typescript)'; cat '\(typescript)'", script.path],
            environment: ["COFFER_HOME": directory.url.path],
            removing: ["COFFER_PASSWORD", "DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"], deadline: .seconds(120))
        #expect(result.stdout.components(separatedBy: "Password of the Aegis vault:").count == 3, "both runs reached the prompt: \(result.stdout)")
        for path in settings {
            let stty = try String(contentsOfFile: path, encoding: .utf8)
            #expect(stty.contains(" echo "), "echo is back on after \(path): \(stty)")
            #expect(!stty.contains("-echo "))
        }
    }

    @Test("2: with the key file missing, list and code say how many records cannot be read and why")
    func keyMissingIsReported() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Bank:alice?secret=\(secret)&issuer=Bank\n")
        try FileManager.default.moveItem(at: directory.appending("keys"), to: directory.appending("keys.away"))
        for command in [["list"], ["code"], ["code", "bank"]] {
            let result = try await coffer(directory.url, command)
            // list needs no key: it shows the names and types, and says the rest in a note.
            #expect(result.status == (command == ["list"] ? 0 : 1), "\(command)")
            #expect(command != ["list"] || result.stdout.contains("Bank: alice  TOTP"), "\(result.stdout)")
            #expect(result.stderr.contains("1 stored record(s) cannot be read: the key file"), "\(command): \(result.stderr)")
            #expect(result.stderr.contains("is missing"))
            #expect(!result.stdout.contains("No accounts yet"))
        }
        let added = try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Mail:alice?secret=\(secret)&issuer=Mail\n")
        #expect(added.status == 1, "nothing new is sealed under a second key")
        // One line that leads with the fix, not the layers that wrapped the key store's error.
        #expect(added.stderr.hasPrefix("coffer: Restore the accounts' key (coffer doctor says what is wrong with it)")
                && added.stderr.contains("Nothing new is sealed until then") && added.stderr.split(separator: "\n").count == 1, "\(added.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("keys/org.coffer.authenticator.key").path))
    }

    @Test("8: an edited column of the wrong type, or a mechanism without its account: list, code, doctor and export say so and exit 1; no crash")
    func damagedRows() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Bank:alice?secret=\(secret)&issuer=Bank\notpauth://totp/Mail:bob?secret=\(secret)&issuer=Mail\notpauth://totp/Shop:eve?secret=\(secret)&issuer=Shop\n")
        var sqlite3 = Configuration()
        sqlite3.foreignKeysEnabled = false  // as the sqlite3 shell opens a file
        try await DatabaseQueue(path: directory.appending("authenticator.sqlite").path, configuration: sqlite3).write { db in
            try db.execute(sql: "UPDATE mechanism SET counter = 'abc' WHERE issuer = 'Bank'")
            try db.execute(sql: "DELETE FROM account WHERE issuer = 'Mail'")
        }
        for command in [["list"], ["code"], ["doctor"], ["export", "-"]] {
            let result = try await coffer(directory.url, command)
            #expect(result.status == 1, "\(command): \(result.status) \(result.stderr)")
            #expect((result.stdout + result.stderr).contains("2 stored record(s) cannot be read"), "\(command): \(result.stdout) \(result.stderr)")
        }
        let shop = try await coffer(directory.url, ["code", "shop"])
        #expect(shop.status == 0 && shop.stdout.hasPrefix("Shop: eve  "), "the other accounts still work: \(shop.stderr)")
    }

    @Test("2: with the store's key file gone, store put and rotate-key refuse to make a second key; store list lists")
    func storeKeyMissing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        #expect(try await coffer(directory.url, ["store", "put", "a"], input: "value-A").status == 0)
        let sealed = try Data(contentsOf: directory.appending("store/a"))
        let keys = directory.appending("keys")
        try FileManager.default.moveItem(at: keys, to: directory.appending("keys.away"))
        for command in [["store", "put", "a"], ["store", "put", "c"], ["store", "rotate-key"]] {
            let result = try await coffer(directory.url, command, input: "value-2")
            #expect(result.status == 1, "\(command)")
            #expect(result.stderr.contains("org.coffer.store.key is missing, and 1 stored value(s) are sealed with it"), "\(command): \(result.stderr)")
        }
        #expect(try Data(contentsOf: directory.appending("store/a")) == sealed)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("store/c").path))
        #expect(!FileManager.default.fileExists(atPath: keys.appendingPathComponent("org.coffer.store.key").path), "no second key")
        try FileManager.default.moveItem(at: directory.appending("keys.away"), to: keys)
        #expect(try await coffer(directory.url, ["store", "get", "a"]).stdout == "value-A\n")
    }

    @Test("2: export with records it cannot read writes nothing, and the last good backup stays")
    func exportRefusesUnreadable() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Bank:alice?secret=\(secret)&issuer=Bank\n")
        let backup = directory.appending("backup.json")
        #expect(try await coffer(directory.url, ["export", backup.path]).status == 0)
        let good = try Data(contentsOf: backup)
        try FileManager.default.moveItem(at: directory.appending("keys"), to: directory.appending("keys.away"))
        let result = try await coffer(directory.url, ["export", backup.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("nothing was exported") && result.stderr.contains("1 stored record(s) cannot be read"), "\(result.stderr)")
        #expect(try Data(contentsOf: backup) == good)
    }

    @Test("review: store list checks its directory and reports errors; a store directory others can write to is refused")
    func storeList() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        #expect(try await coffer(directory.url, ["store", "list"]).stdout == "", "no store yet: nothing, exit 0")
        try await coffer(directory.url, ["store", "put", "a"], input: "v")
        #expect(try await coffer(directory.url, ["store", "list"]).stdout == "a\n")
        chmod(directory.appending("store").path, 0o777)
        let open = try await coffer(directory.url, ["store", "list"])
        #expect(open.status == 1 && open.stderr.contains("group or other users can write to it"), "\(open.stderr)")
        let notADirectory = directory.appending("file")
        try Data().write(to: notADirectory)
        let broken = try await coffer(notADirectory, ["store", "list"])
        #expect(broken.status == 1 && broken.stderr.hasPrefix("coffer: "), "\(broken.stderr)")
    }

    @Test("review: standard input is read up to a limit, not without end")
    func boundedInput() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let huge = String(repeating: "A", count: 5 << 20)
        for command in [["add", "-"], ["store", "put", "big"], ["add", "--issuer", "I", "--account", "a", "--secret", "-"]] {
            let result = try await coffer(directory.url, command, input: huge)
            #expect(result.status == 1, "\(command)")
            #expect(result.stderr.hasPrefix("coffer: standard input holds more than"), "\(command): \(result.stderr)")
        }
    }

    @Test("review: an import entry given a new id says so; failures are one line on stderr")
    func reportsAndOneLine() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let entry = { (name: String) in
            "{\"type\": \"totp\", \"uuid\": \"11111111-2222-3333-4444-555555555555\", \"name\": \"\(name)\", \"issuer\": \"X\", \"info\": {\"secret\": \"\(secret)\", \"algo\": \"SHA1\", \"digits\": 6, \"period\": 30}}"
        }
        let vault = "{\"version\": 1, \"header\": {\"slots\": null, \"params\": null}, \"db\": {\"version\": 2, \"entries\": [\(entry("a")), \(entry("b"))]}}"
        let file = directory.appending("vault.json")
        try Data(vault.utf8).write(to: file)
        let imported = try await coffer(directory.url, ["import", file.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("  imported: X: a (totp)"))
        #expect(imported.stdout.contains("  imported under a new id (its id belongs to another stored account): X: b (totp)"), "\(imported.stdout)")
        // Only the note, on this first import, of where the accounts' key was made.
        #expect(imported.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("coffer: note: with no keyring here") }, "\(imported.stderr)")

        try FileManager.default.moveItem(at: directory.appending("keys"), to: directory.appending("keys.away"))
        for (command, input) in [(["add", "-"], "otpauth://totp/X:a?secret=\(secret)&issuer=X\n"), (["code"], ""), (["list"], "")] {
            let result = try await coffer(directory.url, command, input: input)
            #expect(result.status == (command == ["list"] ? 0 : 1), "list needs no key")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(command): one line, not log lines too: \(result.stderr)")
        }
    }

    @Test("review: output that cannot be written (a full disk) is an error, never a crash or a silent success",
          .enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "needs /dev/full"))
    func fullOutput() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank\n")
        for command in ["export - --format aegis", "code bank", "list"] {
            let result = try await CofferProcess.run(
                executable: URL(fileURLWithPath: "/bin/sh"), ["-c", "exec \"$0\" \(command) > /dev/full", try CofferProcess.executable.path],
                environment: ["COFFER_HOME": directory.url.path], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
            #expect(result.status == 1, "\(command): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("coffer: Free some space where the output goes, or send it elsewhere: standard output could not be written"), "\(command): \(result.stderr)")
        }
    }

    @Test("5: a data directory another user planted (0777, a key file they know, an empty 0666 database) is refused",
          .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
    func hostileDirectory() async throws {
        let planted = try await SecondUser.plantDirectory()
        defer { try? FileManager.default.removeItem(at: planted) }
        let setUp = try await SecondUser.run("""
            cd '\(planted.path)' && mkdir -m 777 keys && echo file > authenticator.keystore && : > authenticator.sqlite \
            && chmod 666 authenticator.sqlite authenticator.keystore \
            && printf '{"format":1,"primary":1,"keys":[{"id":1,"material":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}]}' > keys/org.coffer.authenticator.key \
            && chmod 644 keys/org.coffer.authenticator.key
            """)
        #expect(setUp.status == 0, "\(setUp.stderr)")
        let before = try FileManager.default.contentsOfDirectory(atPath: planted.path).sorted()
        for command in [["list"], ["add", "-"]] {
            let result = try await coffer(planted, command, input: "otpauth://totp/Bank:alice?secret=\(secret)&issuer=Bank\n")
            #expect(result.status == 1)
            #expect(result.stderr.contains("\(planted.path) belongs to uid \(SecondUser.identity!.uid), not to you"), "\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted.path).sorted() == before, "nothing written there")
        #expect(try Data(contentsOf: planted.appendingPathComponent("authenticator.sqlite")).isEmpty)
    }

    @Test("5: a directory of your own that others can write to, and a key file others can read, are refused")
    func permissiveOwnFiles() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Bank:alice?secret=\(secret)&issuer=Bank\n")
        let key = directory.appending("keys/org.coffer.authenticator.key")
        chmod(key.path, 0o644)
        let readable = try await coffer(directory.url, ["code", "bank"])
        #expect(readable.status == 1)
        #expect(readable.stderr.contains("\(key.path)") && readable.stderr.contains("mode 644") && readable.stderr.contains("chmod 600"))
        let doctor = try await coffer(directory.url, ["doctor"])
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("key file") && doctor.stdout.contains("mode 644"), "doctor tells the truth: \(doctor.stdout)")
        chmod(key.path, 0o600)
        chmod(directory.url.path, 0o777)
        let open = try await coffer(directory.url, ["code", "bank"])
        #expect(open.status == 1)
        #expect(open.stderr.contains("group or other users can write to it"), "\(open.stderr)")
        chmod(directory.url.path, 0o700)
        #expect(try await coffer(directory.url, ["code", "bank"]).status == 0)
    }

    @Test("7: export writes 0600 from the first byte; a symbolic link or a device is refused; - is standard output",
          .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
    func exports() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Bank:alice?secret=\(secret)&issuer=Bank\n")
        let out = TemporaryDirectory()
        defer { out.remove() }
        chmod(out.url.path, 0o755)  // others may look, as in a home directory
        // Another user polls the directory for readable files while exports run.
        let attacker = Task {
            try await SecondUser.run("end=$(($(date +%s)+4)); n=0; while [ $(date +%s) -lt $end ]; do for f in '\(out.url.path)'/* '\(out.url.path)'/.*.tmp; do grep -l \(secret) \"$f\" 2>/dev/null && n=$((n+1)); done; done; echo \"read=$n\"")
        }
        for index in 0..<20 {
            let result = try await coffer(directory.url, ["export", out.appending("vault-\(index).json").path, "--format", "aegis"], environment: ["COFFER_LOG_LEVEL": "error"])
            #expect(result.status == 0, "\(result.stderr)")
        }
        let polled = try await attacker.value
        #expect(polled.stdout.contains("read=0"), "another user read an export: \(polled.stdout)")
        #expect(try permissions(of: out.appending("vault-0.json")) == 0o600)

        let target = out.appending("kept.txt")
        try Data("keep".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: out.appending("link.json"), withDestinationURL: target)
        let link = try await coffer(directory.url, ["export", out.appending("link.json").path, "--format", "aegis"])
        #expect(link.status == 1 && link.stderr.contains("symbolic link"))
        #expect(try String(contentsOf: target, encoding: .utf8) == "keep")
        let device = try await coffer(directory.url, ["export", "/dev/null", "--format", "aegis"])
        #expect(device.status == 1 && device.stderr.contains("not a regular file"))
        let shared = out.appending("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
        chmod(shared.path, 0o777)  // no sticky bit: another user could swap the export for their own file
        let unsafe = try await coffer(directory.url, ["export", shared.appendingPathComponent("v.json").path, "--format", "aegis"])
        #expect(unsafe.status == 1 && unsafe.stderr.contains("no sticky bit"), "\(unsafe.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: shared.path).isEmpty)
        let standardOutput = try await coffer(directory.url, ["export", "-", "--format", "aegis"])
        #expect(standardOutput.status == 0)
        #expect(standardOutput.stdout.contains("\"entries\"") && standardOutput.stderr.contains("standard output"))
    }

    @Test("13, 14: secrets from standard input, never argv; empty passwords refused; \\r\\n stripped from password files")
    func secretsAndPasswords() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let two = "otpauth://totp/A:x?secret=\(secret)&issuer=A\r\notpauth://totp/B:y?secret=\(secret)&issuer=B\n"
        let added = try await coffer(directory.url, ["add", "-"], input: two)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "Added A: x (TOTP)\nAdded B: y (TOTP)\n")
        let typed = try await coffer(directory.url, ["add", "--issuer", "C", "--account", "z", "--secret", "-"], input: secret + "\n")
        #expect(typed.status == 0, "\(typed.stderr)")
        let noTerminal = try await coffer(directory.url, ["add", "--issuer", "D", "--account", "w"])
        #expect(noTerminal.status == 1 && noTerminal.stderr.contains("--secret -"))

        let vault = directory.appending("vault.json").path
        let empty = try await coffer(directory.url, ["export", vault, "--format", "aegis", "--encrypt"], environment: ["COFFER_PASSWORD": ""])
        #expect(empty.status == 1 && empty.stderr.contains("empty"))
        #expect(!FileManager.default.fileExists(atPath: vault))
        let passwordFile = directory.appending("password")
        try Data("hunter22\r\n".utf8).write(to: passwordFile)
        let exported = try await coffer(directory.url, ["export", vault, "--format", "aegis", "--encrypt", "--password-file", passwordFile.path])
        #expect(exported.status == 0, "\(exported.stderr)")
        let other = TemporaryDirectory()
        defer { other.remove() }
        let imported = try await coffer(other.url, ["import", vault, "--format", "aegis"], environment: ["COFFER_PASSWORD": "hunter22"])
        #expect(imported.status == 0, "the password was hunter22, not hunter22\\r: \(imported.stderr)")
        let short = try await coffer(directory.url, ["export", vault, "--format", "aegis", "--encrypt"], environment: ["COFFER_PASSWORD": "short"])
        #expect(short.stderr.contains("shorter than 8 characters"))
    }
}
