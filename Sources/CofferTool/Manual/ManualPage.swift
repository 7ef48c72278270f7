/// The man(7) page of one command (`coffer-code.1`), written from its help: name, synopsis,
/// description, options and subcommands; the tool's own page adds the exit statuses, the
/// environment and the files.
struct ManualPage {
    /// The command line that names the command: `["coffer", "store", "put"]`.
    let path: [String]
    let command: CommandHelp

    /// `coffer-store-put`: what `man` is given.
    var name: String { path.joined(separator: "-") }

    var fileName: String { name + ".1" }

    /// Every page of the tool: its own, then each command's, depth first.
    static func all(of tool: CommandHelp) -> [ManualPage] {
        func pages(_ command: CommandHelp, _ path: [String]) -> [ManualPage] {
            [ManualPage(path: path, command: command)]
                + command.shownSubcommands.flatMap { pages($0, path + [$0.commandName]) }
        }
        return pages(tool, [tool.commandName])
    }

    /// The page of `coffer WORDS…` (`["store", "put"]`), or `nil` when there is no such command.
    static func page(of tool: CommandHelp, for words: [String]) -> ManualPage? {
        var command = tool
        var path = [tool.commandName]
        for word in words {
            guard let next = command.shownSubcommands.first(where: { $0.commandName == word }) else { return nil }
            command = next
            path.append(word)
        }
        return ManualPage(path: path, command: command)
    }

    /// The page in man(7) markup.
    func rendered(version: String) -> String {
        var lines = [
            #".TH "\#(Roff.escaped(name.uppercased()))" "1" "" "\#(Roff.escaped("coffer " + version))" "Coffer Manual""#,
            ".nh",  // no hyphenation: names and options are copied from the page
            ".ad l",
            ".SH NAME",
            Roff.escaped(name) + " \\- " + Roff.escaped(command.abstract ?? ""),
            ".SH SYNOPSIS",
            synopsis,
            ".SH DESCRIPTION",
            Roff.escaped(command.abstract ?? ""),
        ]
        if let discussion = command.discussion, !discussion.isEmpty {
            lines += Roff.paragraphs(discussion)
        }
        if !command.shownArguments.isEmpty {
            lines += [".SH OPTIONS"] + command.shownArguments.flatMap(Self.entry)
        }
        if !command.shownSubcommands.isEmpty {
            lines.append(".SH COMMANDS")
            for subcommand in command.shownSubcommands {
                lines += [".TP", Roff.bold(name + "-" + subcommand.commandName) + "(1)", Roff.escaped(subcommand.abstract ?? "")]
            }
        }
        if path.count == 1 {
            lines += ManualSections.exitStatus + ManualSections.environment + ManualSections.files
        }
        lines += [".SH SEE ALSO", seeAlso]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `coffer code [--json] [--at time] [query]`, as one filled paragraph.
    private var synopsis: String {
        var words = [Roff.bold(path.joined(separator: " "))]
        for argument in command.shownArguments {
            var word: String
            if argument.kind == "positional" {
                word = Roff.italic(argument.valueName ?? "value")
            } else {
                word = Roff.bold(argument.names?.first.map(\.spelled) ?? "")
                if argument.kind == "option" { word += " " + Roff.italic(argument.valueName ?? "value") }
            }
            if argument.isRepeating { word += " ..." }
            words.append(argument.isOptional ? "[" + word + "]" : word)
        }
        if !command.shownSubcommands.isEmpty { words.append(Roff.italic("command")) }
        return words.joined(separator: " ")
    }

    /// One argument under OPTIONS: its names and value, then what it does.
    private static func entry(_ argument: CommandHelp.Argument) -> [String] {
        var head: String
        if argument.kind == "positional" {
            head = Roff.italic(argument.valueName ?? "value")
        } else {
            head = (argument.names ?? []).map { Roff.bold($0.spelled) }.joined(separator: ", ")
            if argument.kind == "option" { head += " " + Roff.italic(argument.valueName ?? "value") }
        }
        var body = [Roff.escaped(argument.abstract ?? "")]
        if let discussion = argument.discussion, !discussion.isEmpty {
            body.append(Roff.escaped(discussion))
        }
        if let values = argument.allValues, !values.isEmpty {
            body.append(Roff.escaped("One of: " + values.joined(separator: ", ") + "."))
        }
        if let value = argument.defaultValue, !value.isEmpty {
            body.append(Roff.escaped("Default: " + value + "."))
        }
        return [".TP", head] + body
    }

    /// The tool's page lists every command; a command's page points up to its parent and the tool.
    private var seeAlso: String {
        var names: [String] = []
        for length in stride(from: path.count - 1, through: 1, by: -1) {
            names.append(path.prefix(length).joined(separator: "-"))
        }
        if path.count == 1 { names = ["oathtool"] }
        return names.map { Roff.bold($0) + "(1)" }.joined(separator: ", ")
    }
}
