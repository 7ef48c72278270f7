import ArgumentParser
import CofferStorage
import Foundation

/// `coffer man [COMMAND…]`: the manual pages, written by the tool from its own help, so they
/// need no rebuild and no install step, and always match the binary that prints them.
struct ManCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "man",
        abstract: "Show the manual page of coffer or of one of its commands.",
        discussion: """
            At a terminal the page opens in man; into a pipe or a file it is printed as man(7) \
            markup. With --directory, every page is written there (coffer.1, coffer-code.1, …, \
            mode 0644), for man to find by name.

            Examples:
              coffer man                    # the tool: commands, exit statuses, environment, files
              coffer man code
              coffer man store put
              coffer man code | man -l -
              mkdir -p ~/.local/share/man/man1 && coffer man --directory ~/.local/share/man/man1
            """)

    @Argument(help: ArgumentHelp("The command, as typed after coffer (for example: code, or store put).", valueName: "command"))
    var words: [String] = []
    @Option(name: .customLong("directory"), help: ArgumentHelp("Write every page into this existing directory instead.", valueName: "dir"),
            completion: .directory)
    var directory: String?

    func run() async throws {
        try await reportingErrors {
            let tool = try CommandHelp.tool()
            if let directory {
                guard !directory.isEmpty else { throw CommandFailure.usage("--directory needs the directory to write the pages into") }
                guard words.isEmpty else { throw CommandFailure.usage("--directory writes every page; name no command with it") }
                try write(ManualPage.all(of: tool), into: directory)
                return
            }
            guard let page = ManualPage.page(of: tool, for: words) else {
                let commands = tool.shownSubcommands.map(\.commandName).joined(separator: ", ")
                throw CommandFailure.usage("there is no command 'coffer \(words.joined(separator: " "))'; the commands: \(commands)")
            }
            let text = page.rendered(version: CofferVersion.current)
            if isatty(STDOUT_FILENO) == 1, Subprocess.find("man") != nil {
                let status = try Subprocess.runAttached("man", ["-l", "-"], input: Data(text.utf8))
                guard status == 0 else { throw CommandFailure("man could not show the page (status \(status)); coffer man \(words.joined(separator: " ")) | less shows its markup") }
            } else {
                StandardStreams.control(text)
            }
        }
    }

    /// Each page replaces the one of its name (atomically, 0644: manual pages hold no secret);
    /// the directory must exist, as `man` looks only where it was told to. Every name is checked
    /// before the first page is written, so a refused one leaves the directory as it was.
    private func write(_ pages: [ManualPage], into directory: String) throws {
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw CommandFailure("create the directory \(directory) first (for example: mkdir -p \(directory)); the pages go into an existing one")
        }
        let paths = pages.map { URL(fileURLWithPath: directory).appendingPathComponent($0.fileName).path }
        for path in paths { try FileTrust.checkReplaceable(path) }
        for (index, (page, path)) in zip(pages, paths).enumerated() {
            do {
                try PrivateFile.write(Data(page.rendered(version: CofferVersion.current).utf8), to: path, readableByEveryone: true)
            } catch {
                let reason = error.errorDescription ?? "\(error)"
                throw CommandFailure("\(reason.replacingOccurrences(of: " Nothing was changed.", with: "")) (\(index) of \(pages.count) pages were written before)")
            }
        }
        for path in paths { PrivateFile.removeStaleTemporaries(of: path) }
        StandardStreams.note("coffer: wrote \(pages.count) manual pages into \(directory) (man coffer, man coffer-code, …)")
    }
}
