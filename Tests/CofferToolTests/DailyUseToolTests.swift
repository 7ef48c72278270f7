import CofferAuthenticator
import CofferStorage
import Foundation
import GRDB
import TestSupport
import Testing

/// Issue 12: the tool as a daily user meets it, run as processes on scratch data directories.
@Suite("coffer for daily use: names, queries, codes, errors")
struct DailyUseToolTests {
    /// RFC 4226's test secret.
    let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    @discardableResult
    func coffer(_ home: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: try CofferProcess.executable, arguments, input: input,
            environment: ["COFFER_HOME": home.path].merging(environment) { $1 },
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "COFFER_STORE_BACKEND"])
    }

    func hotp(_ counter: UInt64, of secret: String? = nil) throws -> String {
        try OathGenerator.hotp(secret: Base32.decode(secret ?? self.secret), counter: counter)
    }

    @Test("9: after rename, list, code, export, queries and JSON all use the new names; the old ones still find it")
    func renamedEverywhere() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/GitHub:alice?secret=\(secret)&issuer=GitHub\n")
        let renamed = try await coffer(directory.url, ["rename", "github", "--issuer", "  GitHub (work) ", "--account", "alice@work"])
        #expect(renamed.stdout.hasPrefix("Renamed to GitHub (work): alice@work. coffer restore "), "names are trimmed: \(renamed.stderr)")
        #expect(try await coffer(directory.url, ["list"]).stdout.contains("GitHub (work): alice@work  TOTP\n"))
        #expect(try await coffer(directory.url, ["code", "work"]).stdout.hasPrefix("GitHub (work): alice@work  "))
        let json = try await coffer(directory.url, ["list", "--json"]).stdout
        #expect(json.contains("\"issuer\" : \"GitHub (work)\"") && json.contains("\"accountName\" : \"alice@work\""))
        #expect(json.contains("\"identity\" : {"), "the identity stays, under its own key: \(json)")
        let code = try await coffer(directory.url, ["code", "--json"]).stdout
        #expect(code.contains("\"issuer\" : \"GitHub (work)\""))
        let exported = try await coffer(directory.url, ["export", "-"]).stdout
        #expect(exported.contains("\"issuer\" : \"GitHub (work)\"") && exported.contains("\"name\" : \"alice@work\""))
        for query in ["GitHub (work): alice@work", "github (WORK):alice@work", "GitHub:alice", "GitHub: alice"] {
            #expect(try await coffer(directory.url, ["code", query, "--raw"]).status == 0, "\(query)")
        }
        for empty in [["--issuer", "   "], ["--account", ""]] {
            let refused = try await coffer(directory.url, ["rename", "github"] + empty)
            #expect(refused.status == 64 && refused.stderr.contains("must not be empty"), "a usage error")
        }
    }

    @Test("9: queries ignore case and accents, and an issuer with ':' is addressed exactly")
    func queries() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let uris = [
            "otpauth://totp/J%C3%BCrgen%20GmbH:j%C3%BCrgen?secret=\(secret)&issuer=J%C3%BCrgen%20GmbH",
            "otpauth://totp/a%3Ab:c?secret=\(secret)&issuer=a%3Ab",
            "otpauth://totp/a:b%3Ac?secret=\(secret)&issuer=a",
        ]
        let added = try await coffer(directory.url, ["add", "-"], input: uris.joined(separator: "\n") + "\n")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try await coffer(directory.url, ["code", "jurgen"]).stdout.hasPrefix("Jürgen GmbH: jürgen  "))
        #expect(try await coffer(directory.url, ["code", "JURGEN GMBH: JURGEN", "--raw"]).status == 0)
        let colon = try await coffer(directory.url, ["code", "a:b:c"])
        #expect(colon.stdout.split(separator: "\n").count == 2, "both issuer 'a:b' / 'c' and issuer 'a' / 'b:c' print as a:b:c: \(colon.stdout)")
        #expect(try await coffer(directory.url, ["code", "a:b: c", "--raw"]).status == 0, "'Issuer: account' with issuer a:b is exact")
    }

    @Test("7: bare code never moves a HOTP counter; a query naming one account does; several matches list it without a code")
    func hotpOnlyOnRequest() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: """
            otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank
            otpauth://hotp/Bank:carol?secret=JBSWY3DPEHPK3PXP&issuer=Bank
            otpauth://totp/Mail:bob?secret=\(secret)&issuer=Mail

            """)
        for arguments in [["code"], ["code", "bank"], ["code", "bob"], ["code", "--json"]] {
            let listed = try await coffer(directory.url, arguments)
            #expect(listed.status == 0, "\(arguments): \(listed.stderr)")
            #expect(listed.stdout.contains("run coffer code 'Bank: bob' for the next code"), "\(arguments): \(listed.stdout)")
            let first = [try hotp(0), try hotp(0, of: "JBSWY3DPEHPK3PXP")]
            #expect(!first.contains(where: listed.stdout.contains))
        }
        #expect(try await coffer(directory.url, ["list", "--json"]).stdout.components(separatedBy: "\"counter\" : 0").count == 3, "no counter moved")
        #expect(try await coffer(directory.url, ["code", "Bank: bob"]).stdout == "Bank: bob  \(try hotp(0))\n")
        #expect(try await coffer(directory.url, ["code", "bank:bob", "--raw"]).stdout == "\(try hotp(1))\n")
        #expect(try await coffer(directory.url, ["code", "carol", "--raw"]).stdout == "\(try hotp(0, of: "JBSWY3DPEHPK3PXP"))\n", "carol's counter is her own")
    }

    @Test("4: --raw prints the code alone, and refuses a query that names several accounts")
    func raw() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/A:x?secret=\(secret)&issuer=A\notpauth://totp/A:y?secret=\(secret)&issuer=A\n")
        let one = try await coffer(directory.url, ["code", "A: x", "--raw"])
        #expect(one.status == 0 && one.stdout.count == 7 && one.stdout.allSatisfy { $0.isNumber || $0 == "\n" }, "\(one.stdout)")
        let several = try await coffer(directory.url, ["code", "a", "--raw"])
        #expect(several.status == 3 && several.stdout.isEmpty && several.stderr.contains("matches 2 accounts"), "ambiguous")
    }

    @Test("12: a corrupt, foreign or newer database says what it is and what to do; the file is left as it was")
    func databases() async throws {
        let cases: [(String, (URL) async throws -> Void, String)] = [
            ("corrupt", { try Data(repeating: 0x41, count: 4096).write(to: $0) }, "not a SQLite database, or it is damaged"),
            ("foreign", { url in try await DatabaseQueue(path: url.path).write { try $0.execute(sql: "CREATE TABLE photos (id INTEGER)") } },
             "not Coffer's: it holds tables Coffer did not make (photos)"),
            ("foreign, in WAL mode", { url in
                try await DatabaseQueue(path: url.path).write { db in
                    try db.execute(sql: "PRAGMA journal_mode = WAL")
                    try db.execute(sql: "CREATE TABLE photos (id INTEGER)")
                }
            }, "not Coffer's: it holds tables Coffer did not make (photos)"),
            ("newer", { url in
                try await DatabaseQueue(path: url.path).write { db in
                    try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
                    try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v99: from the future')")
                }
            }, "written by a newer version of Coffer"),
        ]
        for (name, make, expected) in cases {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            try await coffer(directory.url, ["list"])  // the data directory and key exist
            let database = directory.appending("authenticator.sqlite")
            try FileManager.default.removeItem(at: database)
            try await make(database)
            chmod(database.path, 0o600)
            let before = try Data(contentsOf: database)
            let result = try await coffer(directory.url, ["list"])
            #expect(result.status == 1, "\(name)")
            #expect(result.stderr.contains(expected) && result.stderr.contains("move it aside or restore it"), "\(name): \(result.stderr)")
            #expect(!result.stderr.contains("SQLite error"), "\(name): no raw SQLite error")
            #expect(try Data(contentsOf: database) == before, "\(name): left as it was")
        }
    }

    @Test("12: a mistyped command suggests the nearest; add of an existing account offers --replace, which re-enrols")
    func guidance() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let typo = try await coffer(directory.url, ["lsit"])
        #expect(typo.status == 64 && typo.stderr == "coffer: 'lsit' is not a coffer command. Did you mean 'list'? (coffer --help lists them all)\n")
        #expect(try await coffer(directory.url, ["--version"]).stdout == CofferVersion.current + "\n")

        try await coffer(directory.url, ["add", "-"], input: "otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank&counter=5\n")
        try await coffer(directory.url, ["rename", "bank", "--account", "Bob (old phone)"])
        let again = try await coffer(directory.url, ["add", "-"], input: "otpauth://hotp/Bank:bob?secret=JBSWY3DPEHPK3PXP&issuer=Bank\n")
        #expect(again.status == 1 && again.stderr.contains("add it with --replace"), "\(again.stderr)")
        let replaced = try await coffer(directory.url, ["add", "--replace", "-"], input: "otpauth://hotp/Bank:bob?secret=JBSWY3DPEHPK3PXP&issuer=Bank\n")
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stdout == "Added Bank: Bob (old phone) (HOTP)\n", "the name shown is kept")
        let code = try await coffer(directory.url, ["code", "bank", "--raw"])
        #expect(code.stdout == (try OathGenerator.hotp(secret: Base32.decode("JBSWY3DPEHPK3PXP"), counter: 0)) + "\n", "the new secret, from counter 0")
    }

    @Test("13: bash completion offers commands, files, and account names read from the store; zsh and fish scripts are made")
    func completions() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        try await coffer(home, ["add", "-"], input: "otpauth://totp/GitHub:alice?secret=\(secret)&issuer=GitHub\notpauth://totp/Mail:bob?secret=\(secret)&issuer=Mail\n")
        let script = directory.appending("coffer.bash")
        try Data(try await coffer(home, ["completion", "bash"]).stdout.utf8).write(to: script)
        try Data().write(to: directory.appending("export.2fas"))
        func complete(_ words: [String]) async throws -> [String] {
            let line = words.joined(separator: " ")
            let result = try await CofferProcess.run(
                executable: URL(fileURLWithPath: "/bin/bash"),
                ["-c", """
                    source "$0"; cd "$1"; COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " "))); COMP_CWORD=\(words.count - 1)
                    COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}; _coffer; printf '%s\\n' "${COMPREPLY[@]}"
                    """, script.path, directory.url.path],
                environment: ["COFFER_HOME": home.path, "PATH": try CofferProcess.executable.deletingLastPathComponent().path + ":/usr/bin:/bin"])
            return result.stdout.split(separator: "\n").map(String.init)
        }
        let commands = try await complete(["coffer", "co"])
        #expect(commands.contains("code") && !commands.contains("clipboard-clear"), "the hidden helper is not offered")
        #expect(try await complete(["coffer", "code", "G"]) == ["GitHub:alice"])
        // Matched as queries are: anywhere in the name, any case (issue 23).
        #expect(try await complete(["coffer", "code", "hub"]) == ["GitHub:alice"])
        #expect(try await complete(["coffer", "show", "BOB"]) == ["Mail:bob"])
        #expect(Set(try await complete(["coffer", "remove", ""])) == ["GitHub:alice", "Mail:bob"])
        #expect(try await complete(["coffer", "import", "exp"]).contains("export.2fas"))
        // Pressing Tab where there is no store yet creates nothing: no directory, no key.
        let fresh = directory.appending("fresh")
        let none = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"),
            ["-c", "source \"$0\"; COMP_WORDS=(coffer code ''); COMP_CWORD=2; COMP_LINE='coffer code '; COMP_POINT=${#COMP_LINE}; _coffer; echo \"n=${#COMPREPLY[@]}\"", script.path],
            environment: ["COFFER_HOME": fresh.path, "PATH": try CofferProcess.executable.deletingLastPathComponent().path + ":/usr/bin:/bin"])
        #expect(none.stdout.contains("n=0"), "\(none.stdout)")
        #expect(!FileManager.default.fileExists(atPath: fresh.path), "completion made no store")
        for shell in ["zsh", "fish"] {
            #expect(try await coffer(home, ["--generate-completion-script", shell]).stdout.contains("---completion"), "\(shell)")
        }
    }

    @Test("13: help examples fit 80 columns: no example line, or URI, is wrapped")
    func helpFits() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let commands = [[], ["add"], ["list"], ["code"], ["verify"], ["remove"], ["rename"], ["import"], ["export"], ["migrate"], ["doctor"],
                        ["store"], ["store", "put"], ["store", "get"], ["store", "list"], ["store", "delete"], ["store", "rotate-key"]]
        for command in commands {
            let wide = try await coffer(directory.url, ["help"] + command, environment: ["COLUMNS": "1000"]).stdout
            let narrow = try await coffer(directory.url, ["help"] + command, environment: ["COLUMNS": "80"]).stdout
            let examples = wide.split(separator: "\n").filter { $0.hasPrefix("  coffer ") || $0.hasPrefix("  printf ") || $0.hasPrefix("  echo ") }
            #expect(!examples.isEmpty || command == ["help"], "\(command) has examples")
            for example in examples {
                #expect(narrow.contains(example + "\n"), "\(command): '\(example)' is wrapped at 80 columns")
            }
        }
    }
}
