import ArgumentParser
import Logging

/// The `coffer` command-line tool.
@main
struct Coffer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "Keep secrets safe on disk.",
        discussion: """
            Coffer stores values encrypted (AES-256-GCM) in files under your data directory \
            ($XDG_DATA_HOME/coffer, else ~/.local/share/coffer), with the key in a 0600 key file.

            Try it:
              coffer store put greeting 'Hello from Coffer'
              coffer store get greeting
            """,
        subcommands: [StoreCommand.self])

    static func main() async {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = LogLevelOption.fromEnvironment()
            return handler
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
