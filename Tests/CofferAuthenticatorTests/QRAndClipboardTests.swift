import CofferAuthenticator
import Foundation
import TestSupport
import Testing

/// Issue 12.2, 5, 6, 8: QR code images in (zbar, libpng, TurboJPEG), QR codes out
/// (libqrencode), the clipboard (a real Xvfb with xclip) and the watch view, as processes.
@Suite("coffer with QR codes, the clipboard and the watch view")
struct QRAndClipboardTests {
    let secret = "JRZCL47CMXVOQMNPZR2F7J4RGI"

    @discardableResult
    func coffer(_ home: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: try CofferProcess.executable, arguments, input: input,
            environment: ["COFFER_HOME": home.path].merging(environment) { $1 },
            // No desktop clipboard unless the test gives one.
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "DISPLAY", "WAYLAND_DISPLAY"].filter { environment[$0] == nil })
    }

    /// Runs a shell command and requires it to succeed.
    func shell(_ command: String) async throws {
        let result = try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", command])
        try #require(result.status == 0, "\(command): \(result.stderr)")
    }

    static let hasTools = FileManager.default.isExecutableFile(atPath: "/usr/bin/qrencode")

    @Test("2: a QR code image made by qrencode, as PNG and as JPEG, adds its account; an image of two codes adds both",
          .enabled(if: hasTools, "needs qrencode (scripts/install-deps installs it)"))
    func images() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let png = directory.appending("shot.png").path, jpeg = directory.appending("shot.jpg").path
        let uri = "otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno"
        try await shell("qrencode -s 6 -o '\(png)' '\(uri)'")
        try await shell("/usr/bin/python3 -c \"from PIL import Image; Image.open('\(png)').convert('RGB').save('\(jpeg)', quality=85)\"")
        #expect(try QRCodeImage.texts(in: Data(contentsOf: URL(fileURLWithPath: png))) == [uri])
        #expect(try QRCodeImage.texts(in: Data(contentsOf: URL(fileURLWithPath: jpeg))) == [uri])

        let added = try await coffer(directory.appending("a"), ["add", "--qr", jpeg])
        #expect(added.status == 0 && added.stdout == "Added Deno: Mason (TOTP)\n", "\(added.stderr)")
        let imported = try await coffer(directory.appending("b"), ["import", png])
        #expect(imported.status == 0 && imported.stdout.hasPrefix("Imported 1 account(s) from the QR code image."), "\(imported.stdout)")

        // A Google export in two QR codes, side by side in one picture.
        let lines = try String(contentsOf: ImportFixtures.folder.appendingPathComponent("google-batches.txt"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let halves = [directory.appending("g1.png").path, directory.appending("g2.png").path]
        for (line, path) in zip(lines, halves) { try await shell("qrencode -s 5 -o '\(path)' '\(line)'") }
        let both = directory.appending("both.png").path
        try await shell("""
            /usr/bin/python3 -c "from PIL import Image; a, b = Image.open('\(halves[0])'), Image.open('\(halves[1])'); \
            c = Image.new('L', (a.width + b.width, max(a.height, b.height)), 255); c.paste(a, (0, 0)); c.paste(b, (a.width, 0)); c.save('\(both)')"
            """)
        let google = try await coffer(directory.appending("c"), ["import", both])
        #expect(google.status == 0 && google.stdout.contains("Imported 2 account(s)"), "\(google.stdout) \(google.stderr)")
        let refused = try await coffer(directory.appending("d"), ["add", "--qr", both])
        #expect(refused.status == 1 && refused.stderr.contains("is a Google Authenticator export; import it with"))
    }

    @Test("2: images that are not QR codes, damaged, or crafted to be huge are refused with a reason")
    func hostileImages() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        #expect(throws: QRCodeImage.Failure.self) { try QRCodeImage.texts(in: Data("not an image".utf8)) }
        var truncated = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        truncated += Data(repeating: 0, count: 20)
        #expect(throws: QRCodeImage.Failure.self) { try QRCodeImage.texts(in: truncated) }
        // A PNG whose header claims 100,000 × 100,000 pixels: refused before any is decoded.
        func chunk(_ type: String, _ body: [UInt8]) -> Data {
            var data = Data(withUnsafeBytes(of: UInt32(body.count).bigEndian) { Array($0) })
            let typed = Array(type.utf8) + body
            data += typed
            return data + withUnsafeBytes(of: crc32(typed).bigEndian) { Data($0) }
        }
        var huge = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        huge += chunk("IHDR", withUnsafeBytes(of: UInt32(100_000).bigEndian) { Array($0) } + withUnsafeBytes(of: UInt32(100_000).bigEndian) { Array($0) } + [8, 0, 0, 0, 0])
        huge += chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
        huge += chunk("IEND", [])
        #expect { try QRCodeImage.texts(in: huge) } throws: { error in
            "\(error)".contains("too many pixels")
        }
        let blank = directory.appending("blank.png")
        try huge.prefix(8).write(to: blank)
        let result = try await coffer(directory.url, ["import", blank.path])
        #expect(result.status == 1 && result.stderr.hasPrefix("coffer: The image cannot be read"), "\(result.stderr)")
        // A library missing: the error names the package to install.
        let missing = try await coffer(directory.url, ["add", "--qr", blank.path], environment: ["COFFER_LIBPNG": "/nonexistent/libpng.so"])
        #expect(missing.status == 1 && missing.stderr.contains("apt-get install libpng16-16"), "\(missing.stderr)")
    }

    func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    @Test("8: show --uri prints a URI that adds the same account elsewhere; --qr draws one zbar reads back; both ask at a terminal",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) for a terminal"))
    func show() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank&counter=7\n")
        try await coffer(directory.url, ["rename", "bank", "--issuer", "My Bank"])
        let uri = try await coffer(directory.url, ["show", "bank", "--uri"])
        #expect(uri.status == 0)
        let line = uri.stdout.trimmingCharacters(in: .newlines)
        let parsed = try MechanismURI.parse(line)
        #expect(parsed.account.issuer == "My Bank" && parsed.mechanisms[0].secret == secret && parsed.mechanisms[0].counter == 7)

        let drawn = try await coffer(directory.url, ["show", "bank", "--qr"])
        #expect(drawn.status == 0)
        let rows = drawn.stdout.split(separator: "\n").filter { $0.hasPrefix("\u{1B}[30;107m") }
            .map { Array($0.dropFirst("\u{1B}[30;107m".count).prefix { $0 != "\u{1B}" }) }
        // Each character is two modules, one above the other; scale each module to 4 × 4 pixels.
        let scale = 4, width = (rows.first?.count ?? 0) * scale
        var pixels: [UInt8] = []
        for row in rows {
            for half in 0..<2 {
                var line: [UInt8] = []
                for character in row {
                    let dark = character == "█" || (half == 0 ? character == "▀" : character == "▄")
                    line += Array(repeating: dark ? 0 : 255, count: scale)
                }
                for _ in 0..<scale { pixels += line }
            }
        }
        let decoded = try pixels.withUnsafeBufferPointer { try QRCodeImage.texts(inGray: $0, width: width, height: pixels.count / max(1, width)) }
        #expect(decoded == [line], "the terminal drawing scans as the URI")

        let asked = try await PseudoTerminal.run(
            "'\(try CofferProcess.executable.path)' show bank --uri", typing: [.init(after: "[y/N]", type: "n\n")],
            environment: ["COFFER_HOME": directory.url.path], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
        #expect(asked.stdout.contains("This shows the secret of My Bank: bob") && asked.stdout.contains("nothing was shown"))
        #expect(!asked.stdout.contains(secret), "declined: no secret shown")
    }

    static let hasClipboard = FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb") && FileManager.default.isExecutableFile(atPath: "/usr/bin/xclip")

    @Test("5: --copy puts the code on a real X clipboard (Xvfb, xclip), clears it after the delay, and leaves it when it changed",
          .enabled(if: hasClipboard, "needs Xvfb and xclip (scripts/install-deps installs them)"))
    func clipboard() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno\n")
        let display = ":\(Int.random(in: 200...900))"
        // Stopped by the process id it started with, never by a name pattern (which could hit
        // another user's X server). Its deadline is far beyond the test's: with the whole suite
        // running, this test has taken over two minutes, and an X server killed at one minute
        // took the clipboard with it.
        let pidFile = directory.appending("xvfb.pid").path
        let server = Task {
            try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", "echo $$ > \"$0\"; exec /usr/bin/Xvfb \"$1\" -nolisten tcp",
                                                                                      pidFile, display], deadline: .seconds(900))
        }
        defer {
            server.cancel()
            if let text = try? String(contentsOfFile: pidFile, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                kill(pid, SIGTERM)
            }
        }
        // A read that ran past its deadline (a loaded machine) is not an empty clipboard: read again.
        func clipboardText() async throws -> String {
            for _ in 0..<3 {
                let read = try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/xclip"), ["-selection", "clipboard", "-out"],
                                                       environment: ["DISPLAY": display], deadline: .seconds(30))
                if !read.timedOut { return read.stdout }
            }
            Issue.record("xclip -out did not answer in 3 × 30 s")
            return ""
        }
        // Wait until the server answers (a busy machine takes its time).
        for _ in 0..<100 {
            let probe = try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", "printf ready | xclip -selection clipboard -in && xclip -selection clipboard -out"],
                                                    environment: ["DISPLAY": display], deadline: .seconds(10))
            if probe.stdout == "ready" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        // Long enough that a busy machine (CI runs the suites in parallel) reads the code before it is cleared.
        // 10 s: with the whole suite in one process, reading it back once took more than 3 s.
        let environment = ["DISPLAY": display, "COFFER_CLIPBOARD_CLEAR_SECONDS": "10"]
        let copied = try await coffer(directory.url, ["code", "deno", "--copy"], environment: environment)
        #expect(copied.status == 0 && copied.stdout.contains("with xclip; it is cleared in 10 s"), "\(copied.stdout) \(copied.stderr)")
        var code = ""
        for _ in 0..<70 where code.count != 6 {  // the copying xclip serves the selection from a child it forks
            code = try await clipboardText()
            if code.count != 6 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(code.count == 6 && code.allSatisfy(\.isNumber), "the code, nothing else: \(code)")
        try await Task.sleep(for: .seconds(11.5))
        #expect(try await clipboardText().isEmpty, "cleared")

        // The first copy's clearing process must be gone: on a loaded machine it may wake late,
        // read this second copy's code (the same code within one time step) and clear it after
        // the user copied something of theirs. It is the only one started with --after 10.
        for _ in 0..<600 {
            let running = try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/pgrep"), ["-f", "clipboard-clear --tool xclip --after 10$"])
            if running.status != 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        // 30 s this time, counted from before the copy: the user's copy must land well before the
        // clearing looks (on a busy machine the code itself took seconds to appear).
        let started = ContinuousClock.now
        try await coffer(directory.url, ["code", "deno", "--copy"], environment: ["DISPLAY": display, "COFFER_CLIPBOARD_CLEAR_SECONDS": "30"])
        // The user copies something of theirs only once the code is there: before, coffer's
        // xclip could take the selection back after it (a busy machine is slow to fork it).
        code = ""
        for _ in 0..<70 where code.count != 6 {
            code = try await clipboardText()
            if code.count != 6 { try await Task.sleep(for: .milliseconds(100)) }
        }
        _ = try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", "printf 'mine' | xclip -selection clipboard -in"],
                                        environment: ["DISPLAY": display], deadline: .seconds(10))
        #expect(try await clipboardText() == "mine", "the user's copy took the clipboard")
        try await Task.sleep(until: started + .seconds(32))
        #expect(try await clipboardText() == "mine", "what the user copied since is left alone")
    }

    @Test("5: with no clipboard program, --copy goes through the terminal (OSC 52)",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) for a terminal"))
    func osc52() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: "otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno\n")
        let result = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", "\(try CofferProcess.executable.path) code deno --copy", "/dev/null"],
            environment: ["COFFER_HOME": directory.url.path], removing: ["DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"])
        #expect(result.stdout.contains("\u{1B}]52;c;"), "the OSC 52 sequence: \(result.stdout.debugDescription)")
        #expect(result.stdout.contains("through the terminal (OSC 52)"))
    }

    @Test("6: --watch redraws the codes with a countdown (and --next) until Ctrl-C, then shows the cursor again; no HOTP code is issued",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) for a terminal"))
    func watch() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await coffer(directory.url, ["add", "-"], input: """
            otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno
            otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank

            """)
        // Ctrl-C once two frames are on the terminal.
        let result = try await PseudoTerminal.run(
            "'\(try CofferProcess.executable.path)' code --watch --next",
            typing: [.init(after: "\u{1B}[2KDeno: Mason  ", times: 2, type: "\u{3}")],
            environment: ["COFFER_HOME": directory.url.path], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"], deadline: .seconds(120))
        #expect(!result.timedOut)
        let frames = result.stdout.components(separatedBy: "\u{1B}[2KDeno: Mason  ").count - 1
        #expect(frames >= 2, "redrawn every second: \(frames) frames")
        #expect(result.stdout.contains("  next ") && result.stdout.contains("] "), "next code and countdown")
        #expect(result.stdout.contains("\u{1B}[?25l") && result.stdout.contains("\u{1B}[?25h"), "cursor hidden, then shown again")
        #expect(result.stdout.contains("Bank: bob  HOTP (coffer code"))
        #expect(try await coffer(directory.url, ["list", "--json"]).stdout.contains("\"counter\" : 0"), "no HOTP counter moved")
    }
}
