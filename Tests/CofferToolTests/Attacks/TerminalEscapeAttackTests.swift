import CofferAuthenticator
import CofferStorage
import Foundation
import GRDB
import TestSupport
import Testing

/// The fifth round (issue 20, item 5): every string read from storage reaches the terminal
/// escaped, whichever message quotes it: a locking policy, a mechanism id in the
/// unreadable-records summary, names in JSON, log lines.
@Suite("Fifth round: nothing read from storage reaches a terminal raw")
struct TerminalEscapeAttackTests {
    let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    /// A window title, a screen clear, a C1 CSI, a right-to-left override, and a line feed that
    /// would start a forged line.
    static let hostile = "p\u{1B}]0;owned\u{07}\u{1B}[2J\u{9B}31m\u{202E}x\nFORGED line"

    func coffer(_ home: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(executable: try CofferProcess.executable, arguments, input: input,
                                    environment: ["COFFER_HOME": home.path].merging(environment) { $1 },
                                    removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "COFFER_PASSWORD"])
    }

    @Test("5: a locking policy and a changed mechanism id in the SQLite file are printed escaped by list, code, show and doctor, in JSON and in log lines")
    func sqliteColumns() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try #require(try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Bank:bob?secret=\(secret)&issuer=Bank\n").status == 0)
        try #require(try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Mail:bob?secret=\(secret)&issuer=Mail\n").status == 0)
        let database = try DatabaseQueue(path: directory.appending("authenticator.sqlite").path)
        try await database.write { db in
            try db.execute(sql: "UPDATE account SET isLocked = 1, lockingPolicy = ? WHERE issuer = 'Bank'", arguments: [Self.hostile])
            // Foreign keys would carry the id change along; the row is then unreadable (its
            // secret is bound to the old id) and is summarised by id.
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: "UPDATE mechanism SET mechanismUUID = ? WHERE issuer = 'Mail'", arguments: [Self.hostile])
        }
        try await database.write { db in
            try db.execute(sql: "UPDATE account SET displayAccountName = ? WHERE issuer = 'Bank'", arguments: [Self.hostile])
        }
        var seen: [String] = []
        for (arguments, environment) in [(["list"], [:]), (["list", "--json"], [:]), (["code"], [:]), (["code", "bank"], [:]),
                                          (["code", "--json"], [:]), (["show", "bank", "--uri"], [:]), (["doctor"], [:]),
                                          (["code", "bank"], ["COFFER_LOG_LEVEL": "trace"]), (["list"], ["COFFER_LOG_LEVEL": "trace"]),
                                          (["---completion", "code", "--", "positional@0", "2", "0", "code", ""], [:])] {
            let result = try await coffer(directory.url, arguments, input: "y\n", environment: environment)
            for (stream, text) in [("stdout", result.stdout), ("stderr", result.stderr)] {
                let raw = text.unicodeScalars.filter { TerminalText.isControl($0) && $0 != "\n" && $0 != "\t" }
                #expect(raw.isEmpty, "\(arguments) \(environment) \(stream): \(raw.map { String($0.value, radix: 16) })")
                #expect(!text.split(separator: "\n").contains { $0.hasPrefix("FORGED") }, "\(arguments) \(stream): a line forged")
            }
            seen.append(result.stdout + result.stderr)
        }
        let everything = seen.joined()
        #expect(everything.contains("by the policy 'p\\u{1b}]0;owned\\u{7}"), "the policy is shown, escaped")
        #expect(everything.contains("mechanism p\\u{1b}]0;owned"), "the changed id is shown, escaped")
        #expect(everything.contains("\\u001b]0;owned\\u0007\\u001b[2J\\u009b31m\\u202ex"), "JSON escapes every one of them")
        // JSON escapes once: it decodes to the stored text (list and code alike).
        struct Named: Decodable { let issuer: String; let accountName: String }
        for arguments in [["list", "--json"], ["code", "--json"]] {
            let json = try await coffer(directory.url, arguments).stdout
            let names = try JSONDecoder().decode([Named].self, from: Data(json.utf8))
            #expect(names.contains { $0.accountName == Self.hostile }, "\(arguments): \(json)")
        }
    }

    @Test("5 (2nd review): export - escapes names as JSON \\u escapes, and the vault still reads back the stored names")
    func exportEscapes() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try #require(try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Bank:bob?secret=\(secret)&issuer=Bank\n").status == 0)
        try await DatabaseQueue(path: directory.appending("authenticator.sqlite").path).write { db in
            try db.execute(sql: "UPDATE account SET displayIssuer = ?", arguments: [Self.hostile])
        }
        let exported = try await coffer(directory.url, ["export", "-"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let raw = exported.stdout.unicodeScalars.filter { TerminalText.isControl($0) && $0 != "\n" && $0 != "\t" }
        #expect(raw.isEmpty, "\(raw.map { String($0.value, radix: 16) })")
        let entries = try AegisVault.read(Data(exported.stdout.utf8), password: nil)
        #expect(entries.first?.issuer == Self.hostile, "the same JSON to a parser")
    }

    @Test("5: coffer store get escapes a stored value at a terminal, and writes it as stored when piped",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) from util-linux for a pseudo-terminal"))
    func storeGet() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let value = "v\u{1B}]0;owned\u{07}\u{9B}2J"
        try #require(try await coffer(directory.url, ["store", "put", "hostile"], input: value).status == 0)
        let piped = try await coffer(directory.url, ["store", "get", "hostile"])
        #expect(piped.stdout == value + "\n", "piped: the value as stored")
        let atTerminal = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", "'\(try CofferProcess.executable.path)' store get hostile", "/dev/null"],
            environment: ["COFFER_HOME": directory.url.path], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_STORE_BACKEND"])
        #expect(!atTerminal.stdout.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{9B}" }, "\(atTerminal.stdout)")
        #expect(atTerminal.stdout.contains("v\\u{1b}]0;owned\\u{7}\\u{9b}2J"), "\(atTerminal.stdout)")
    }

    @Test("5: JSON output escapes C1 controls, bidirectional overrides and separators as \\u escapes, and still decodes to the same names")
    func jsonEscapes() throws {
        let text = TerminalText.jsonEscaped("{\"issuer\" : \"a\u{9B}b\u{202E}c\u{2028}d\u{E0001}\"}\n")
        #expect(text == "{\"issuer\" : \"a\\u009bb\\u202ec\\u2028d\\udb40\\udc01\"}\n")
        let decoded = try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
        #expect(decoded["issuer"] == "a\u{9B}b\u{202E}c\u{2028}d\u{E0001}")
    }
}
