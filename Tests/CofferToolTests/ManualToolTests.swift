import Foundation
import TestSupport
import Testing

/// Issue 23, point 5: manual pages from the tool itself (`coffer man`), read through `man`.
@Suite("coffer man: manual pages written from the tool's own help")
struct ManualToolTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func run(_ script: String, scratch: TemporaryDirectory, environment: [String: String] = [:]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", "set -u\n" + script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path].merging(environment) { $1 },
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
    }

    /// The commands `coffer [WORDS…] --help` lists, depth first, as page names (`coffer-store-put`).
    static func helpPages(_ words: [String] = []) async throws -> [String] {
        var pages = [(["coffer"] + words).joined(separator: "-")]
        for name in try await DiscoverabilityToolTests.listedCommands(words) {
            pages += try await helpPages(words + [name])
        }
        return pages
    }

    @Test("--directory writes a 0644 page for every command --help lists, each read by man without a warning")
    func everyPage() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            mkdir "$SCRATCH/man1"
            "$COFFER" man --directory "$SCRATCH/man1" || exit 10
            cd "$SCRATCH/man1"
            ls
            echo '--- modes'; stat -c %a *.1 | sort -u
            echo '--- warnings'; for page in *.1; do man --warnings -l "$page" 2>&1 > /dev/null | sed "s|^|$page: |"; done
            echo '--- code'; MANWIDTH=200 man -P cat -l coffer-code.1
            """, scratch: scratch)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("wrote"), "\(result.stderr)")
        let out = result.stdout
        let written = Set(out.components(separatedBy: "--- modes")[0].split(separator: "\n").map(String.init))
        let expected = Set(try await Self.helpPages().map { $0 + ".1" })
        #expect(expected.contains("coffer-store-put.1") && expected.contains("coffer-key-move.1"), "\(expected.sorted())")
        #expect(written == expected, "written but not in --help: \(written.subtracting(expected).sorted()); missing: \(expected.subtracting(written).sorted())")
        #expect(out.contains("--- modes\n644\n--- warnings\n--- code"), "one mode, no warning: \(out)")
        let code = out.components(separatedBy: "--- code\n").last ?? ""
        #expect(code.contains("coffer-code - Print the current code of every matching account."), "\(code)")
        // The page says what --help says: every option of coffer code is in it.
        let help = try await CofferProcess.run(executable: try CofferProcess.executable, ["code", "--help"])
        let options = Set(help.stdout.split(whereSeparator: { " ,\n".contains($0) }).filter { $0.hasPrefix("--") }.map(String.init))
        #expect(options.isSuperset(of: ["--json", "--raw", "--at", "--backend"]), "\(options)")
        for option in options { #expect(code.contains(option), "\(option) is not in the page") }
        #expect(code.contains("coffer code github --next"), "the examples, as typed: \(code)")
    }

    @Test("coffer man COMMAND: in man at a terminal, markup into a pipe; an unknown command is a usage error")
    func onePage() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run(#"""
            "$COFFER" man store put | head -1
            echo '--- terminal'; MANPAGER=cat PAGER=cat MANWIDTH=100 script -qec "$COFFER man code" /dev/null | tr -d '\r' | grep -a 'coffer-code - '
            echo '--- tool'; "$COFFER" man | MANWIDTH=200 man -P cat -l - | grep -aA1 -E '^(EXIT STATUS|ENVIRONMENT|FILES)$'
            echo '--- unknown'; "$COFFER" man store fetch; echo "status=$?"
            """#, scratch: scratch)
        let out = result.stdout
        #expect(out.hasPrefix(#".TH "COFFER\-STORE\-PUT" "1""#), "\(out)")
        #expect(out.contains("--- terminal\n") && out.contains("coffer-code - Print the current code"), "rendered by man at a terminal: \(out)")
        #expect(out.contains("EXIT STATUS\n") && out.contains("ENVIRONMENT\n") && out.contains("FILES\n"), "\(out)")
        #expect(out.hasSuffix("status=64\n"), "\(out)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("there is no command 'coffer store fetch'"), "\(result.stderr)")
    }

    @Test("the tool's page lists the README's exit statuses and every COFFER_ variable the sources read")
    func exitStatusesAndEnvironment() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run(#""$COFFER" man | MANWIDTH=300 man -P cat -l -"#, scratch: scratch)
        let page = result.stdout
        let exitSection = page.components(separatedBy: "EXIT STATUS\n").last?.components(separatedBy: "ENVIRONMENT\n").first ?? ""
        let statuses = Set(exitSection.split(separator: "\n").compactMap { Int32($0.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") })
        #expect(statuses == Set(try ExitStatusToolTests.readmeTable().keys), "\(exitSection)")

        // Every COFFER_ name in a string of the sources, but the tool's own markers and C's.
        let ownMarkers: Set<String> = ["COFFER_CLIPBOARD_DIGEST", "COFFER_DROPPED_LIBRARY_PATH"]
        var read: Set<String> = []
        let sources = Self.root.appendingPathComponent("Sources")
        for case let file as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)! where ["swift", "c"].contains(file.pathExtension) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: /"(COFFER_[A-Z_]+)"/) { read.insert(String(match.output.1)) }
        }
        #expect(read.isSuperset(of: ["COFFER_HOME", "COFFER_TRASH_DAYS", "COFFER_LIBZBAR"]), "\(read.sorted())")
        let environment = page.components(separatedBy: "ENVIRONMENT\n").last ?? ""
        for name in read.subtracting(ownMarkers).sorted() {
            #expect(environment.contains(name), "\(name) is read but the page does not explain it")
        }
    }

    @Test("--directory replaces pages atomically; refuses a missing directory, a link at a page, a directory others can write")
    func directoryAttacks() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            cd "$SCRATCH"
            "$COFFER" man --directory missing; echo "missing: $?"
            mkdir man1 && echo old > man1/coffer-code.1
            "$COFFER" man --directory man1 2> /dev/null; echo "again: $? $(head -c 3 man1/coffer-code.1)"
            echo victim > victim; mkdir man2; ln -sf "$SCRATCH/victim" man2/coffer-list.1
            "$COFFER" man --directory man2; echo "link: $? $(cat victim) $(ls man2 | wc -l)"
            touch -d '2 minutes ago' man1/.coffer-code.1.0123456789AB.tmp; touch man1/.coffer-add.1.0123456789AB.tmp
            "$COFFER" man --directory man1 2> /dev/null; echo "leftovers: $(ls -A man1 | grep tmp)"
            rm man1/.coffer-add.1.0123456789AB.tmp
            mkdir open && chmod 777 open
            "$COFFER" man --directory open; echo "open: $? $(ls open | wc -l)"
            ls -a man1 | grep -c tmp
            """, scratch: scratch)
        let out = result.stdout
        #expect(out.contains("missing: 1\n") && result.stderr.contains("create the directory missing first"), "\(out) \(result.stderr)")
        #expect(out.contains("again: 0 .TH"), "an existing page is replaced: \(out)")
        #expect(out.contains("link: 1 victim 1\n") && result.stderr.contains("symbolic link"), "refused before any page is written: \(out) \(result.stderr)")
        #expect(out.contains("leftovers: .coffer-add.1.0123456789AB.tmp\n"), "a killed run's old temporary file is removed, a running one's kept: \(out)")
        #expect(out.contains("open: 1 0\n"), "\(out) \(result.stderr)")
        #expect(out.hasSuffix("0\n"), "no temporary file is left: \(out)")
    }

    @Test("--directory refuses a directory another user owns, and writes nothing there",
          .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
    func plantedDirectory() async throws {
        let planted = try await SecondUser.plantDirectory(mode: "755")
        defer { try? FileManager.default.removeItem(at: planted) }
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run(#""$COFFER" man --directory "$PLANTED"; echo "status=$?""#, scratch: scratch, environment: ["PLANTED": planted.path])
        #expect(result.stdout == "status=1\n", "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains(planted.path), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted.path).isEmpty)

        // The other way round: the second user names a directory of root's.
        let roots = scratch.appending("roots")
        try FileManager.default.createDirectory(at: roots, withIntermediateDirectories: false)
        chmod(scratch.url.path, 0o755)
        let theirs = try await SecondUser.run("HOME=/tmp '\(try SecondUser.tool().path)' man --directory '\(roots.path)'; echo \"status=$?\"")
        #expect(theirs.stdout == "status=1\n" && theirs.stderr.hasPrefix("coffer: Name a place of your own instead of \(roots.path): you may not write there"),
                "\(theirs.stdout) \(theirs.stderr)")
    }
}
