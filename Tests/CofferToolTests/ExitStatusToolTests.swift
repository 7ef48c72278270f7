import Foundation
import TestSupport
import Testing

/// Issue 23: one exit-status table, the tool guide's (docs/coffer.md), kept by every command, and
/// a closed standard output that ends a command quietly.
@Suite("coffer's exit statuses, as the tool guide's table gives them")
struct ExitStatusToolTests {
    /// The tool guide's table: status → meaning.
    static func readmeTable() throws -> [Int32: String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("docs/coffer.md"), encoding: .utf8)
        guard let start = readme.range(of: "| status | meaning |") else { return [:] }
        var table: [Int32: String] = [:]
        for line in readme[start.upperBound...].split(separator: "\n").dropFirst() {
            guard line.hasPrefix("| ") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            if let status = Int32(cells[0]) { table[status] = cells[1] }
        }
        return table
    }

    @Test("every status in the README's table is what the commands exit with, each failure in one line")
    func statuses() async throws {
        let table = try Self.readmeTable()
        #expect(Set(table.keys) == [0, 1, 2, 3, 4, 64, 69, 141], "\(table)")
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        // Each case: the status it must exit with, then the command (bash, one line).
        let cases: [(Int32, String)] = [
            (0, #""$COFFER" code ada --raw"#),
            (0, #""$COFFER" list deno"#),
            (1, #"echo 'otpauth://totp/X:y?secret=!!!' | "$COFFER" add -"#),
            (1, #""$COFFER" import "$SCRATCH/missing.json""#),
            (2, #""$COFFER" code nothing"#),
            (2, #""$COFFER" show nothing --uri"#),
            (2, #""$COFFER" remove nothing --yes"#),
            (2, #""$COFFER" rename nothing --issuer X"#),
            (2, #""$COFFER" store get missing"#),
            (3, #""$COFFER" code deno --raw"#),
            (3, #""$COFFER" show deno --uri"#),
            (3, #""$COFFER" remove deno --yes"#),
            (3, #""$COFFER" rename deno --issuer X"#),
            (64, #""$COFFER" code --frobnicate"#),
            (64, #""$COFFER" frobnicate"#),
            (64, #""$COFFER" lst"#),
            (64, #""$COFFER" help nosuch"#),
            (64, #""$COFFER" man --directory ''"#),
            (64, #""$COFFER" show"#),
            (64, #""$COFFER" rename 'Deno: Ada'"#),
            (64, #"echo x | "$COFFER" add - --issuer X"#),
            (64, #""$COFFER" add --issuer X --account y --secret JBSWY3DPEHPK3PXP --digits 9"#),
            (64, #""$COFFER" code --watch --json"#),
            (64, #"COFFER_STORE_BACKEND=floppy "$COFFER" store get greeting"#),
            (69, #""$COFFER" list --backend keychain"#),
            (69, #"COFFER_DATABASE_URL="postgresql://me@/db?host=$SCRATCH/nowhere" "$COFFER" list --backend postgres"#),
        ]
        var script = """
            for name in Ada Ben Cy; do
              echo "otpauth://totp/Deno:$name?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno" | "$COFFER" add - > /dev/null || exit 10
            done

            """
        for (index, (_, command)) in cases.enumerated() {
            script += "\(command) > /dev/null 2> \"$SCRATCH/err.\(index)\"; echo \"case \(index): $? $(wc -l < \"$SCRATCH/err.\(index)\")\"\n"
        }
        // A reader that stops reading, with SIGPIPE as it comes and ignored by a parent.
        script += """
            "$COFFER" list --json 2> "$SCRATCH/err.pipe" | true; echo "pipe: ${PIPESTATUS[0]} $(wc -c < "$SCRATCH/err.pipe")"
            (trap '' PIPE; "$COFFER" list --json 2> "$SCRATCH/err.ignored" | true; echo "ignored: ${PIPESTATUS[0]} $(wc -c < "$SCRATCH/err.ignored")")
            """
        let result = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND", "COFFER_STORE_BACKEND", "COFFER_DATABASE_URL"])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        for (index, (status, command)) in cases.enumerated() {
            let expected = "case \(index): \(status) \(status == 0 ? 0 : 1)"
            #expect(lines.contains { $0 == expected }, "\(command): \(lines.first { $0.hasPrefix("case \(index):") } ?? "?") instead of \(expected)")
        }
        #expect(lines.contains("pipe: 141 0"), "\(result.stdout)")
        #expect(lines.contains("ignored: 141 0"), "\(result.stdout)")
    }

    @Test("coffer --help lists the README's statuses, each by the name its meaning starts with")
    func helpMatchesReadme() async throws {
        let table = try Self.readmeTable()
        let help = try await CofferProcess.run(executable: try CofferProcess.executable, ["--help"], environment: ["COLUMNS": "400"])
        let line = help.stdout.split(separator: "\n").first { $0.contains("Exit status: ") }.map(String.init) ?? ""
        let listed = line.components(separatedBy: "Exit status: ").last?.components(separatedBy: " (").first ?? ""
        let readme = table.keys.sorted().map { status in "\(status) \(table[status]!.components(separatedBy: ":").first!)" }
        #expect(listed == readme.joined(separator: ", "), "--help: \(listed); README: \(readme)")
    }
}
