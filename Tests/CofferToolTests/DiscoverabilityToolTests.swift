import Foundation
import TestSupport
import Testing

/// Issue 23, point 5: what a person finds without reading the source: sorted, aligned listings
/// and completion scripts from the tool itself.
@Suite("coffer: sorted and aligned listings, completion scripts")
struct DiscoverabilityToolTests {
    static func run(_ script: String, scratch: TemporaryDirectory) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", """
                set -u
                for uri in 'otpauth://totp/zeta:one?secret=JBSWY3DPEHPK3PXP&issuer=zeta' \\
                           'otpauth://totp/Alpha:longer-name?secret=JBSWY3DPEHPK3PXP&issuer=Alpha' \\
                           'otpauth://totp/beta:b?secret=JBSWY3DPEHPK3PXP&issuer=beta' \\
                           'otpauth://totp/Alpha:a?secret=JBSWY3DPEHPK3PXP&issuer=Alpha'; do
                  echo "$uri" | "$COFFER" add - > /dev/null 2>&1 || exit 10
                done

                """ + script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path,
                          "PATH": try CofferProcess.executable.deletingLastPathComponent().path + ":/usr/bin:/bin"],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
    }

    /// The subcommands `coffer [WORDS…] --help` lists (not `help`).
    static func listedCommands(_ words: [String] = []) async throws -> [String] {
        let help = try await CofferProcess.run(executable: try CofferProcess.executable, words + ["--help"], environment: ["COLUMNS": "200"])
        let section = help.stdout.components(separatedBy: "SUBCOMMANDS:").dropFirst().first ?? ""
        return section.split(separator: "\n").compactMap { line -> String? in
            let name = line.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
            // A command's line is indented two spaces; its wrapped description more.
            return line.hasPrefix("  ") && !line.hasPrefix("   ") && name != "See" && name != "help" ? name : nil
        }
    }

    @Test("list and code are sorted by issuer then account (case folded); at a terminal the codes line up")
    func sortedAndAligned() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            "$COFFER" list
            echo '--- code'; "$COFFER" code | cut -d' ' -f1-2
            echo '--- terminal'; script -qec "$COFFER code" /dev/null | tr -d '\\r'
            """, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        #expect(out.hasPrefix("Alpha: a  TOTP\nAlpha: longer-name  TOTP\nbeta: b  TOTP\nzeta: one  TOTP\n"), "into a pipe, no header: \(out)")
        let code = out.components(separatedBy: "--- code\n")[1].components(separatedBy: "--- terminal")[0]
        #expect(code == "Alpha: a\nAlpha: longer-name\nbeta: b\nzeta: one\n", "\(code)")
        let terminal = out.components(separatedBy: "--- terminal\n")[1].split(separator: "\n")
        let columns = Set(terminal.compactMap { line in line.firstIndex { $0.isNumber }.map { line.distance(from: line.startIndex, to: $0) } })
        #expect(terminal.count == 4 && columns.count == 1, "every code starts in the same column: \(terminal)")
    }

    @Test("coffer completion bash, zsh, fish print scripts the shells load; bash completes commands and account names")
    func completionScripts() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            "$COFFER" completion zsh | head -1
            "$COFFER" completion fish | grep -c 'complete -c coffer'
            "$COFFER" completion tcsh 2>&1; echo "status=$?"
            bash -c '
              source <(coffer completion bash) || exit 20
              complete -p coffer
              complete_at() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _coffer; printf "[%s]" "${COMPREPLY[@]}"; echo; }
              complete_at coffer tr
              complete_at coffer code be
              complete_at coffer code ONGER
            '
            """, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        #expect(out.hasPrefix("#compdef coffer\n"), "\(out)")
        #expect(out.contains("status=64"), "\(out)")
        #expect(out.contains("complete -o filenames -F _coffer coffer"), "\(out)")
        #expect(out.contains("[trash]"), "commands: \(out)")
        #expect(out.contains("[beta:b]") || out.contains("[beta: b]"), "account names: \(out)")
        #expect(out.contains("[Alpha:longer-name]\n"), "any part of the name, any case: \(out)")
    }

    /// Types at a real bash, zsh and fish (through a pseudo-terminal, as a person does): a word,
    /// Tab, then Ctrl-A and `echo LINE:` in front, so the shell prints the line completion made.
    /// One account is named to run a command if completion left it unquoted.
    @Test("bash, zsh and fish complete account names from any part, in any case, after a colon, quoted; a hostile name runs nothing")
    func completionInShells() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run(#"""
            cd "$SCRATCH"
            echo 'otpauth://totp/Evil:%24(touch%20pwned)%20%60touch%20pwned2%60?secret=JBSWY3DPEHPK3PXP&issuer=Evil' | "$COFFER" add - > /dev/null 2>&1 || exit 11
            # Two names that part at characters the shell quotes: their common part ends before.
            echo 'otpauth://totp/Twin:x%24(touch%20pwned3)?secret=JBSWY3DPEHPK3PXP&issuer=Twin' | "$COFFER" add - > /dev/null 2>&1 || exit 12
            echo 'otpauth://totp/Twin:x%3Btouch%20pwned4?secret=JBSWY3DPEHPK3PXP&issuer=Twin' | "$COFFER" add - > /dev/null 2>&1 || exit 13
            mkdir -p zsh/functions config/fish
            "$COFFER" completion zsh > zsh/functions/_coffer
            printf 'fpath=(%s $fpath)\nautoload -Uz compinit && compinit -u\nPS1="> "\n' "$SCRATCH/zsh/functions" > zsh/.zshrc
            echo 'coffer completion fish | source' > config/fish/config.fish
            printf 'source <(coffer completion bash)\nPS1="> "\n' > bashrc
            # Each word is typed, completed, then the line is printed instead of run.
            type_words() {
              sleep 1.5
              for word in "$@"; do printf 'coffer code %s\t' "$word"; sleep 2; printf '\001%s LINE: \r' "$echo"; sleep 0.5; done
              printf 'exit\r'
            }
            words=(ONE nger Alp Alpha:lo Evil: Twin:)
            echo '--- bash'
            echo=echo type_words "${words[@]}" | HISTFILE=/dev/null script -qec "bash --rcfile $SCRATCH/bashrc -i" /dev/null | grep -ao 'LINE: [^[:cntrl:]]*'
            echo '--- zsh'
            echo=print type_words "${words[@]}" | ZDOTDIR="$SCRATCH/zsh" script -qec 'zsh -i' /dev/null | grep -ao 'LINE: [^[:cntrl:]]*'
            echo '--- fish'
            echo=echo type_words "${words[@]}" | XDG_CONFIG_HOME="$SCRATCH/config" XDG_DATA_HOME="$SCRATCH/data" script -qec 'fish -i' /dev/null | grep -ao 'LINE: [^[:cntrl:]]*'
            echo '--- ran'; ls pwned* 2>&1
            """#, scratch: scratch)
        let out = result.stdout
        #expect(![11, 12, 13].contains(result.status), "\(out) \(result.stderr)")
        for shell in ["bash", "zsh", "fish"] {
            let lines = out.components(separatedBy: "--- \(shell)\n").last?.components(separatedBy: "--- ").first ?? ""
            #expect(lines.contains("LINE: coffer code zeta:one\n"), "\(shell), part of the name: \(out)")
            #expect(lines.contains("LINE: coffer code Alpha:longer-name\n"), "\(shell), any case: \(out)")
            // Two accounts start with Alp: the line gets what they share, colon included.
            #expect(lines.contains("LINE: coffer code Alpha:\n"), "\(shell), the whole issuer: \(out)")
            #expect(lines.components(separatedBy: "LINE: coffer code Alpha:longer-name\n").count == 3, "\(shell), after a colon: \(out)")
            #expect(lines.contains("LINE: coffer code Evil:$(touch pwned) `touch pwned2`\n"), "\(shell), quoted: \(out)")
            #expect(lines.contains("LINE: coffer code Twin:x\n"), "\(shell), no lone backslash: \(out)")
        }
        #expect(out.hasSuffix("--- ran\nls: cannot access 'pwned*': No such file or directory\n"), "nothing ran: \(out)")
    }

    @Test("the tool guide's command table names every command --help lists, and no other")
    func readmeCommandTable() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("docs/coffer.md"), encoding: .utf8)
        guard let start = readme.range(of: "## All the commands\n\n```sh\n"),
              let end = readme.range(of: "```", range: start.upperBound..<readme.endIndex) else {
            Issue.record("the tool guide (docs/coffer.md) has no command table")
            return
        }
        let table = readme[start.upperBound..<end.lowerBound]
        let documented = Set(table.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            return words.first == "coffer" && words.count > 1 ? String(words[1]) : nil
        })
        let listed = Set(try await Self.listedCommands())
        #expect(!listed.isEmpty)
        #expect(listed == documented, "--help lists \(listed.subtracting(documented).sorted()) the README lacks; the README has \(documented.subtracting(listed).sorted()) --help lacks")
    }
}
