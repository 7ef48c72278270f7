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

    /// swift-argument-parser's script for `shell`, with account names offered as `coffer`
    /// matched them (anywhere in the name, any case) instead of only those that start with what
    /// was typed, which bash's `compgen` and zsh's `_describe` would keep. fish's own matching
    /// already falls back to any part of the name, in any case.
    static func script(for shell: CompletionShell) -> String {
        let script = Coffer.completionScript(for: shell)
        switch shell {
        case .bash: return bash(script)
        case .zsh: return zsh(script)
        default: return script
        }
    }

    /// The only custom completion is account names, so the generic helper that offers them is
    /// the one to change: it quotes each name itself (`printf %q`; readline's file-name quoting
    /// leaves `$` and `)` bare, so a name such as `$(…)` came out broken), and a wrapper joins
    /// the words bash split at `:` (every account is named `Issuer:account`, and `:` is in
    /// `COMP_WORDBREAKS`), then takes what precedes the last `:` off each offer, since readline
    /// replaces only what follows it.
    private static func bash(_ script: String) -> String {
        let filtered = #"__coffer_add_completions -W "$(__coffer_custom_complete "#
        let unfiltered = #"__coffer_add_matches "$(__coffer_custom_complete "#
        let helper = #"""
            # Account names as coffer matched them (not filtered again by prefix), quoted here.
            __coffer_add_matches() {
                local match quoted
                compopt +o filenames 2> /dev/null
                while IFS='' read -r match; do
                    [[ -n "${match}" ]] || continue
                    printf -v quoted '%q' "${match}"
                    COMPREPLY+=("${quoted}")
                done <<< "${1}"
            }

            """#
        let wrapper = #"""
            # The words as typed, with those bash split at ':' joined again; what readline will
            # not replace (up to the last ':' of the current word) is taken off each offer.
            _coffer() {
                local -a joined=()
                local -i index cword=0
                for index in "${!COMP_WORDS[@]}"; do
                    if (( index > 1 )) && [[ "${COMP_WORDS[index]}" == : || "${COMP_WORDS[index - 1]}" == : ]]; then
                        joined[${#joined[@]} - 1]+="${COMP_WORDS[index]}"
                    else
                        joined+=("${COMP_WORDS[index]}")
                    fi
                    (( index == COMP_CWORD )) && cword=$(( ${#joined[@]} - 1 ))
                done
                local -a COMP_WORDS=("${joined[@]}")
                local -i COMP_CWORD=${cword}
                local current="${COMP_WORDS[COMP_CWORD]}"
                __coffer_generated "${1}" "${current}" "${COMP_WORDS[COMP_CWORD - 1]}"
                if [[ "${current}" == *:* && "${COMP_WORDBREAKS}" == *:* ]]; then
                    # As typed: quoted with backslashes, as the offers are.
                    local typed="${current%:*}:"
                    local -i offer
                    for offer in "${!COMPREPLY[@]}"; do
                        COMPREPLY[offer]="${COMPREPLY[offer]#"${typed}"}"
                    done
                fi
            }


            """#
        let generated = replacing(filtered, with: unfiltered, in: script)
        return replacing("\n_coffer() {", with: "\n__coffer_generated() {", in: generated)
            .replacingOccurrences(of: "__coffer_custom_complete() {", with: helper + "__coffer_custom_complete() {")
            .replacingOccurrences(of: "complete -o filenames -F _coffer coffer", with: wrapper + "complete -o filenames -F _coffer coffer")
    }

    /// `compadd -U` offers the names without comparing them with the word typed (the word is
    /// replaced by what they share); `_describe` would also cut `Issuer:account` at its colon,
    /// taking `account` for a description.
    private static func zsh(_ script: String) -> String {
        replacing(#"__coffer_complete "${completions[@]:0:-1}""#,
                  with: #"compadd -U -- "${completions[@]:0:-1}""#, in: script)
    }

    /// `script` with `old` replaced. A swift-argument-parser whose script no longer has `old`
    /// stops debug builds (the tests run them), and gives prefix-only completion in release.
    private static func replacing(_ old: String, with new: String, in script: String) -> String {
        assert(script.contains(old), "swift-argument-parser's completion script changed: '\(old)' is gone")
        return script.replacingOccurrences(of: old, with: new)
    }
}

extension CompletionShell: @retroactive ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument)
    }

    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}
