import CofferAuthenticator
import Foundation
import TestSupport
import Testing

/// Attacks on what issue 12 added to the tool (imports, QR code images, `show`, completion,
/// the backend record), as an attacker would make them: crafted files that are huge, slow or
/// full of control characters, files another user owns, a pipe answering a question meant for a
/// person, a database that is not Coffer's. Each was found by an attack review and failed before
/// its fix.
@Suite("Attacks on imports, show and completion")
struct DailyUseAttackTests {
    let secret = "JBSWY3DPEHPK3PXP"

    @discardableResult
    func coffer(_ home: URL, _ arguments: [String], input: String? = nil) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: try CofferProcess.executable, arguments, input: input,
            environment: ["COFFER_HOME": home.path],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "COFFER_PASSWORD", "DISPLAY", "WAYLAND_DISPLAY"],
            deadline: .seconds(120))
    }

    /// Runs `python3 -c program arguments…` and requires it to succeed.
    func python(_ program: String, _ arguments: [String]) async throws {
        let result = try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/python3"), ["-c", program] + arguments)
        try #require(result.status == 0, "\(result.stderr)")
    }

    static let hasPython = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    @Test("A progressive JPEG whose last scan repeats 1,000 times (270 KB, minutes of decoding) is refused, not decoded",
          .enabled(if: hasPython, "needs python3 with Pillow (scripts/install-deps installs both)"))
    func jpegScanBomb() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let bomb = directory.appending("bomb.jpg").path
        // Pillow writes a 7000 × 7000 progressive JPEG; its last scan is then repeated before
        // the end-of-image marker. Every scan makes libjpeg go over the whole image again.
        try await python("""
            import io, sys
            from PIL import Image
            buffer = io.BytesIO()
            Image.new('L', (7000, 7000), 255).save(buffer, 'JPEG', progressive=True, quality=50)
            data = buffer.getvalue()
            i, scans = 2, []
            while True:
                marker = data[i + 1]
                if marker == 0xD9: end = i; break
                length = int.from_bytes(data[i + 2:i + 4], 'big')
                if marker == 0xDA:
                    j = i + 2 + length
                    while not (data[j] == 0xFF and data[j + 1] != 0 and not 0xD0 <= data[j + 1] <= 0xD7): j += 1
                    scans.append((i, j)); i = j
                else:
                    i += 2 + length
            start, stop = scans[-1]
            open(sys.argv[1], 'wb').write(data[:end] + data[start:stop] * 1000 + data[end:])
            """, [bomb])
        for command in [["import", bomb], ["add", "--qr", bomb]] {
            let result = try await coffer(directory.appending("home"), command)
            #expect(result.status == 1, "\(command)")
            #expect(result.stderr.contains("cannot be decoded"), "\(command): \(result.stderr)")
        }
        ReliabilityReport.record("R8", "a 270 KB progressive JPEG with 1,000 repeated scans as a QR code image", tried: "import and add --qr",
                                 outcome: "refused by the scan limit")
    }

    /// A Google Authenticator export line (`otpauth-migration://offline?data=…`) of `payload`.
    func googleLine(_ payload: [UInt8]) -> String {
        "otpauth-migration://offline?data=" + Data(payload).base64EncodedString()
            .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    func varint(_ value: Int) -> [UInt8] {
        var value = value, bytes: [UInt8] = []
        repeat {
            bytes.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
            value >>= 7
        } while value > 0
        return bytes
    }

    @Test("20,000 Google export lines each claiming to be code 1 of 1,000 of another export give a short report, not one note each")
    func googleBatchNotes() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // Fields 3, 4, 5 of MigrationPayload: batch_size 1000, batch_index 0, batch_id i + 1.
        let lines = (0..<20_000).map { googleLine([0x18] + varint(1000) + [0x20, 0x00, 0x28] + varint($0 + 1)) }
        let file = directory.appending("batches.txt")
        let text = Data((lines.joined(separator: "\n") + "\n").utf8)
        try text.write(to: file)
        let result = try await coffer(directory.appending("home"), ["import", file.path])
        #expect(result.status == 0, "\(result.stderr)")
        let notes = result.stdout.split(separator: "\n").filter { $0.contains("note:") }
        #expect(notes.count <= 12, "a few notes, then a count: \(notes.count)")
        #expect(result.stdout.contains("parts of 20000 different exports"), "\(result.stdout.prefix(2000))")
        #expect(result.stdout.utf8.count < 8_192, "the report stays small: \(result.stdout.utf8.count) bytes")
    }

    @Test("One Google export line of 375,000 empty entries is refused whole, before any is built")
    func googleEntryFlood() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("empties.txt")
        try Data((googleLine(Array(repeating: [0x0A, 0x00], count: 375_000).flatMap { $0 }) + "\n").utf8).write(to: file)
        let result = try await coffer(directory.appending("home"), ["import", file.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("more than 10000 entries") && result.stderr.contains("Nothing was imported"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        // Text exports over 4 MiB are refused before parsing, with the limit named.
        let big = directory.appending("big.txt")
        let line = "otpauth://totp/A:b?secret=\(secret)&issuer=A\n"
        try Data(String(repeating: line, count: 4 * 1024 * 1024 / line.utf8.count + 1).utf8).write(to: big)
        let tooBig = try await coffer(directory.appending("home"), ["import", big.path])
        #expect(tooBig.status == 1)
        #expect(tooBig.stderr.contains("more than the 4096 KiB"), "\(tooBig.stderr)")
    }

    @Test("Names in an export cannot write escape sequences, carriage returns or forged lines into the report")
    func controlCharactersInReport() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let entries: [[String: String]] = [
            ["secret": secret, "label": "me", "type": "TOTP", "issuer": "Bank\u{1B}[2K\r  imported: Bank"],
            ["secret": secret, "label": "x\n  imported: Forged: line (totp)", "type": "TOTP", "issuer": "Shop"],
            ["secret": secret, "label": String(repeating: "long ", count: 2_000), "type": "TOTP", "issuer": "Wide"],
        ]
        let file = directory.appending("andotp.json")
        try JSONSerialization.data(withJSONObject: entries).write(to: file)
        let result = try await coffer(directory.appending("home"), ["import", file.path])
        for bad: Character in ["\u{1B}", "\r"] { #expect(!result.stdout.contains(bad), "\(result.stdout)") }
        #expect(!result.stdout.split(separator: "\n").contains { $0.hasPrefix("  imported: Forged") }, "\(result.stdout)")
        #expect(result.stdout.contains("\\u{1b}[2K"), "shown escaped, so the person sees what is there: \(result.stdout)")
        #expect(result.stdout.split(separator: "\n").allSatisfy { $0.count < 600 }, "a long name is cut short in the report")
    }

    @Test("An export another user owns or can write to, or reached through their link, is refused; your own file and a pipe are read",
          .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
    func untrustedImportFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        let uri = "otpauth://totp/Evil:planted?secret=\(secret)&issuer=Evil"
        // A shared sticky directory of ours (as /tmp is root's): what the other user puts in it.
        let shared = directory.appending("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
        chmod(directory.url.path, 0o755)
        chmod(shared.path, 0o1777)
        let theirs = shared.appendingPathComponent("export.txt").path
        let planted = try await SecondUser.run("""
            printf '%s\\n' '\(uri)' > '\(theirs)' && chmod 666 '\(theirs)' && ln -s '\(directory.url.path)/mine.txt' '\(shared.path)/link.txt'
            """)
        try #require(planted.status == 0, "\(planted.stderr)")
        // And a directory of their own, on the way to a file that is root's.
        let theirDirectory = try await SecondUser.plantDirectory(mode: "755")
        defer { try? FileManager.default.removeItem(at: theirDirectory) }
        let underTheirs = theirDirectory.appendingPathComponent("export.txt")
        let placed = try await SecondUser.run("printf '%s\\n' '\(uri)' > '\(underTheirs.path)' && chmod 644 '\(underTheirs.path)'")
        try #require(placed.status == 0, "\(placed.stderr)")
        let within = try await coffer(home, ["import", underTheirs.path])
        #expect(within.status == 1)
        #expect(within.stderr.contains("\(theirDirectory.path) (owner uid \(SecondUser.identity!.uid)") && within.stderr.contains("directory on the way"),
                "\(within.stderr)")
        let mine = directory.appending("mine.txt")
        try Data("otpauth://totp/Mine:me?secret=\(secret)&issuer=Mine\n".utf8).write(to: mine)
        chmod(mine.path, 0o600)

        let owned = try await coffer(home, ["import", theirs])
        #expect(owned.status == 1)
        #expect(owned.stderr.contains("belongs to another user") && owned.stderr.contains("copy it to a file of your own"), "\(owned.stderr)")
        let linked = try await coffer(home, ["import", shared.appendingPathComponent("link.txt").path])
        #expect(linked.status == 1)
        #expect(linked.stderr.contains("symbolic link") && linked.stderr.contains("uid \(SecondUser.identity!.uid)"), "\(linked.stderr)")
        let qr = try await coffer(home, ["add", "--qr", theirs])
        #expect(qr.status == 1, "a QR code image is an import too: \(qr.stderr)")
        #expect(!(try await coffer(home, ["list"])).stdout.contains("Evil"), "nothing of theirs was imported")

        chmod(mine.path, 0o666)
        let writable = try await coffer(home, ["import", mine.path])
        #expect(writable.status == 1)
        #expect(writable.stderr.contains("group or other users can write to it") && writable.stderr.contains("chmod go-w"), "\(writable.stderr)")
        chmod(mine.path, 0o644)
        #expect(try await coffer(home, ["import", mine.path]).status == 0, "readable by others is fine: an export to import is not a secret store")
        let piped = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", "\"$0\" import <(printf '%s\\n' 'otpauth://totp/Piped:me?secret=\(secret)&issuer=Piped')",
                                                           try CofferProcess.executable.path],
            environment: ["COFFER_HOME": home.path], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
        #expect(piped.status == 0, "process substitution is a pipe: \(piped.stderr)")
        let list = try await coffer(home, ["list"]).stdout
        #expect(list.contains("Mine: me") && list.contains("Piped: me"))
    }

    @Test("A FIFO nobody writes to is read as an empty export, not waited on forever")
    func fifoWithoutWriter() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fifo = directory.appending("export.fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        // Opened without blocking; with no writer, the read ends at once.
        let result = try await coffer(directory.appending("home"), ["import", fifo])
        #expect(result.status == 1)
        #expect(result.stderr.contains("empty") || result.stderr.contains("not recognised") || result.stderr.contains("format"), "\(result.stderr)")
    }

    static let hasScript = FileManager.default.isExecutableFile(atPath: "/usr/bin/script")

    @Test("show --uri at a terminal asks the terminal, so a pipe on standard input cannot answer yes; without a terminal it needs --yes",
          .enabled(if: hasScript, "needs script(1) for a terminal"))
    func showAsksTheTerminal() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        try await coffer(home, ["add", "-"], input: "otpauth://totp/Show:me?secret=\(secret)&issuer=Show\n")
        let executable = try CofferProcess.executable.path
        func inTerminal(_ command: String, typed: String) async throws -> CofferProcess.Result {
            try await PseudoTerminal.run(command, typing: [.init(after: "[y/N]", type: typed)],
                environment: ["COFFER_HOME": home.path, "COFFER": executable], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
        }
        // `yes |` answers on standard input; the person at the terminal types n.
        let piped = try await inTerminal("yes | \"$COFFER\" show 'Show: me' --uri", typed: "n\n")
        #expect(piped.stdout.contains("Show it? [y/N]") && piped.stdout.contains("nothing was shown"), "\(piped.stdout)")
        #expect(!piped.stdout.contains(secret))
        let typed = try await inTerminal("echo n | \"$COFFER\" show 'Show: me' --uri", typed: "y\n")
        #expect(typed.stdout.contains(secret), "the person said yes at the terminal: \(typed.stdout)")
        // Standard output not a terminal (a file, a pipe): printed, as a script asked for it.
        let redirected = try await coffer(home, ["show", "Show: me", "--uri"])
        #expect(redirected.status == 0 && redirected.stdout.contains(secret))
        // A terminal on standard output but none to ask (setsid: no controlling terminal).
        let noTTY = try await inTerminal("setsid -w \"$COFFER\" show 'Show: me' --uri < /dev/null", typed: "y\n")
        #expect(noTTY.stdout.contains("there is no terminal to ask") && noTTY.stdout.contains("--yes"), "\(noTTY.stdout)")
        #expect(!noTTY.stdout.contains(secret))
    }

    @Test("Completion on Tab adds no file to the data directory (no -wal, no -shm)")
    func completionWritesNothing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        try await coffer(home, ["add", "-"], input: "otpauth://totp/Comp:me?secret=\(secret)&issuer=Comp\n")
        let before = try FileManager.default.contentsOfDirectory(atPath: home.path).sorted()
        let database = try Data(contentsOf: home.appendingPathComponent("authenticator.sqlite"))
        let completed = try await coffer(home, ["---completion", "code", "--", "positional@0", "2", "0"])
        #expect(completed.stdout.contains("Comp:me"), "\(completed.stdout) \(completed.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.path).sorted() == before)
        #expect(try Data(contentsOf: home.appendingPathComponent("authenticator.sqlite")) == database)
    }

    @Test("A damaged backend record is not echoed: one short line, no escape sequences, even for 10 MB of it")
    func damagedBackendRecord() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        try await coffer(home, ["add", "-"], input: "otpauth://totp/Rec:me?secret=\(secret)&issuer=Rec\n")
        let record = home.appendingPathComponent("authenticator.backend")
        for content in [Data("sqlite\n\u{1B}[31mkeychain".utf8), Data(repeating: UInt8(ascii: "x"), count: 10_000_000)] {
            try content.write(to: record)
            chmod(record.path, 0o600)
            let result = try await coffer(home, ["list"])
            #expect(result.status == 1)
            #expect(result.stderr.split(separator: "\n").count == 1 && !result.stderr.contains("\u{1B}"), "\(result.stderr.prefix(500))")
            #expect(result.stderr.utf8.count < 1_024 && result.stderr.contains("authenticator.backend"))
        }
    }

    @Test("Another program's WAL database, and one a newer Coffer migrated, are refused byte for byte untouched",
          .enabled(if: hasPython, "needs python3's sqlite3"))
    func foreignDatabaseUntouched() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let database = home.appendingPathComponent("authenticator.sqlite")
        try await python("""
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1]); c.execute('pragma journal_mode=wal')
            c.execute('create table notes(x)'); c.execute("insert into notes values ('another program''s data')"); c.commit(); c.close()
            """, [database.path])
        let foreign = try Data(contentsOf: database)
        let refused = try await coffer(home, ["list"])
        #expect(refused.status == 1 && refused.stderr.contains("not Coffer's") && refused.stderr.contains("left untouched"), "\(refused.stderr)")
        #expect(try Data(contentsOf: database) == foreign)

        try FileManager.default.removeItem(at: home)
        try await coffer(home, ["add", "-"], input: "otpauth://totp/New:er?secret=\(secret)&issuer=New\n")
        // A newer Coffer records its migration and raises the schema version in the header.
        try await python("""
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1]); c.execute("insert into grdb_migrations values ('v99: from the future')")
            version = c.execute('pragma user_version').fetchone()[0]; c.execute('pragma user_version = %d' % (version + 1)); c.commit(); c.close()
            """, [database.path])
        let newer = try Data(contentsOf: database)
        let tooNew = try await coffer(home, ["list"])
        #expect(tooNew.status == 1 && tooNew.stderr.contains("newer version of Coffer"), "\(tooNew.stderr)")
        #expect(try Data(contentsOf: database) == newer)
    }

    @Test("--copy with no clipboard to copy to says so before making the code: a HOTP counter is not used up",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid"), "needs setsid(1)"))
    func copyWithoutClipboard() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        try await coffer(home, ["add", "-"], input: "otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank&counter=5\n")
        // No DISPLAY, no WAYLAND_DISPLAY, and (setsid) no terminal for OSC 52.
        let result = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/setsid"), ["-w", try CofferProcess.executable.path, "code", "bank", "--copy"],
            environment: ["COFFER_HOME": home.path], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "DISPLAY", "WAYLAND_DISPLAY"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("there is no clipboard here"), "\(result.stderr)")
        #expect(try await coffer(home, ["list", "--json"]).stdout.contains("\"counter\" : 5"), "the counter did not move")
    }
}
