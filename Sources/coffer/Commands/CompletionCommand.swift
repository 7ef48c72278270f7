import ArgumentParser
import Foundation

/// `coffer completion bash|zsh|fish`: the completion script for a shell, from the tool itself,
/// so completion needs no rebuild and no install step.
struct CompletionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completion",
        abstract: "Print the completion script for bash, zsh or fish.",
        discussion: """
            The script completes commands, options, files and the names of your accounts. Load \
            it in your shell's startup file, or install it where the shell looks.

            Examples:
              source <(coffer completion bash)                  # in ~/.bashrc
              coffer completion zsh > ~/.zfunc/_coffer          # with fpath+=~/.zfunc
              coffer completion fish > ~/.config/fish/completions/coffer.fish
            """)

    @Argument(help: "The shell: bash, zsh or fish.") var shell: CompletionShell

    func run() throws {
        StandardStreams.control(Coffer.completionScript(for: shell))
        try StandardStreams.flushOutput()
    }
}

extension CompletionShell: @retroactive ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument)
    }

    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}
