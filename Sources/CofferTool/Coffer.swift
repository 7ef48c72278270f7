import ArgumentParser
import CofferStorage
import Logging

/// The `coffer` command-line tool.
package struct Coffer: AsyncParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "An authenticator and secret store that keeps your secrets sealed on disk.",
        discussion: """
            Accounts live in $XDG_DATA_HOME/coffer/authenticator.sqlite (else \
            ~/.local/share/coffer), their secrets sealed with AES-256-GCM under a key kept in the \
            OS keyring when there is one, else in a 0600 key file.

            Try it:
              echo 'otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP' | coffer add -
              coffer code example
              coffer store put greeting 'Hello from Coffer'
            """ + "\n\n" + ExitStatus.summary,
        version: CofferVersion.current,
        subcommands: [AddCommand.self, ListCommand.self, CodeCommand.self, VerifyCommand.self, ShowCommand.self, RemoveCommand.self, RenameCommand.self, TrashCommand.self, RestoreCommand.self, ImportCommand.self, ExportCommand.self, MigrateCommand.self, LoginCommand.self, TokenCommand.self, LogoutCommand.self, SessionsCommand.self, KeyCommand.self, DoctorCommand.self, StoreCommand.self, CompletionCommand.self, ManCommand.self, ClipboardClearCommand.self])

    /// Runs the tool on this process's command line (`coffer`, and `coffer-session` with the
    /// session commands' work in place: ``SessionCommands``), on this thread: a command's async
    /// work runs where the process started (``SyncBridge``), with no hand-off to Swift's
    /// cooperative pool; only what must run beside it (the PostgreSQL pool, blocking keyring and
    /// TPM calls) takes threads of its own.
    package static func runFromCommandLine() {
        SyncBridge.run { await runCommandLine() }
    }

    private static func runCommandLine() async {
        ProcessHardening.start()
        LoggingSystem.bootstrap { label in EscapedLogHandler(label: label, logLevel: LogLevelOption.fromEnvironment()) }
        let typed = Array(CommandLine.arguments.dropFirst())
        // A session command goes to coffer-session before anything is parsed (its name check
        // and its help are coffer-session's to give).
        if SessionCommands.work == nil, SessionCommands.areNamed(in: typed) {
            do {
                try SessionHelper.handOff()
            } catch {
                StandardStreams.note("coffer: \(error)")
                exit(withError: error.status.exitCode)
            }
        }
        let commands = configuration.subcommands.filter { $0.configuration.shouldDisplay }
            .flatMap { [$0._commandName] + $0.configuration.aliases } + ["help"]
        let hidden = configuration.subcommands.filter { !$0.configuration.shouldDisplay }.map { $0._commandName }
        if let first = typed.first, !hidden.contains(first),
           let message = CommandSuggestion.message(for: first, commands: commands) {
            StandardStreams.note("coffer: \(message)")
            exit(withError: ExitStatus.usage.exitCode)
        }
        // `coffer help NAME` for a command there is not: a usage error, not the tool's help.
        if typed.count >= 2, typed[0] == "help", !typed[1].hasPrefix("-"), !commands.contains(typed[1]) {
            StandardStreams.note("coffer: there is no command '\(typed[1])' (see coffer --help)")
            exit(withError: ExitStatus.usage.exitCode)
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            reportParseError(error)
        }
        do {
            if var asynchronous = command as? AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            // What print buffered must reach its reader; a full disk is a failure.
            try StandardStreams.flushOutput()
        } catch let failure as CommandFailure {
            StandardStreams.note("coffer: \(failure)")
            exit(withError: failure.status.exitCode)
        } catch {
            exit(withError: error)
        }
    }

    /// `--help` and `--version` as ArgumentParser prints them; a command line that does not
    /// parse as one line, `coffer: what is wrong (see coffer COMMAND --help)`, and status 64.
    private static func reportParseError(_ error: any Error) -> Never {
        guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
        let message = message(for: error).split(whereSeparator: \.isNewline).first.map(String.init) ?? "the command line is not valid"
        let named = CommandLine.arguments.dropFirst().first { argument in
            configuration.subcommands.contains { $0._commandName == argument }
        }
        let help = named.map { "coffer \($0) --help" } ?? "coffer --help"
        let trimmed = message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message
        StandardStreams.note("coffer: \(trimmed) (see \(help))")
        exit(withError: ExitStatus.usage.exitCode)
    }
}
