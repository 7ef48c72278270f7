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
        StandardStreams.control(Self.script(for: shell))
        try StandardStreams.flushOutput()
    }

    /// swift-argument-parser's script for `shell`; for bash, account names are offered as
    /// `coffer` matched them (anywhere in the name, any case) instead of only those that start
    /// with what was typed, which bash's `compgen` would keep.
    static func script(for shell: CompletionShell) -> String {
        let script = Coffer.completionScript(for: shell)
        guard shell == .bash else { return script }
        let filtered = #"__coffer_add_completions -W "$(__coffer_custom_complete "#
        let unfiltered = #"__coffer_add_matches "$(__coffer_custom_complete "#
        let helper = """
            # Account names as coffer matched them (not filtered again by prefix).
            __coffer_add_matches() {
                local match
                while IFS='' read -r match; do
                    [[ -n "${match}" ]] && COMPREPLY+=("${match}")
                done <<< "${1}"
            }

            """
        return script.replacingOccurrences(of: filtered, with: unfiltered)
            .replacingOccurrences(of: "__coffer_custom_complete() {", with: helper + "__coffer_custom_complete() {")
    }
}

extension CompletionShell: @retroactive ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument)
    }

    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}
