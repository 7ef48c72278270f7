import ArgumentParser
import CofferStorage
import Logging

/// The `coffer` command-line tool.
@main
struct Coffer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
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
            """,
        version: CofferVersion.current,
        subcommands: [AddCommand.self, ListCommand.self, CodeCommand.self, ShowCommand.self, RemoveCommand.self, RenameCommand.self, ImportCommand.self, ExportCommand.self, MigrateCommand.self, KeyCommand.self, DoctorCommand.self, StoreCommand.self, ClipboardClearCommand.self])

    static func main() async {
        ProcessHardening.start()
        LoggingSystem.bootstrap { label in EscapedLogHandler(label: label, logLevel: LogLevelOption.fromEnvironment()) }
        let commands = configuration.subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName } + ["help"]
        let hidden = configuration.subcommands.filter { !$0.configuration.shouldDisplay }.map { $0._commandName }
        if let typed = CommandLine.arguments.dropFirst().first, !hidden.contains(typed),
           let message = CommandSuggestion.message(for: typed, commands: commands) {
            StandardStreams.note("coffer: \(message)")
            exit(withError: ExitCode.failure)
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            // What print buffered must reach its reader; a full disk or a closed pipe is a failure.
            try StandardStreams.flushOutput()
        } catch let failure as CommandFailure {
            StandardStreams.note("coffer: \(failure)")
            exit(withError: ExitCode.failure)
        } catch {
            exit(withError: error)
        }
    }
}
