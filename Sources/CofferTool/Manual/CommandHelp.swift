import ArgumentParser
import Foundation

/// One command of the tool as swift-argument-parser describes it to other programs (the JSON of
/// `coffer --experimental-dump-help`, format version 0): the facts the manual pages are written
/// from, so a page says exactly what `--help` says.
struct CommandHelp: Decodable {
    /// An option's or flag's name as typed: `-h`, `--help`.
    struct Name: Decodable {
        var kind: String
        var name: String

        var spelled: String { kind == "long" ? "--\(name)" : "-\(name)" }
    }

    /// A positional argument, option or flag.
    struct Argument: Decodable {
        /// `positional`, `option` or `flag`.
        var kind: String
        var names: [Name]?
        var valueName: String?
        var abstract: String?
        var discussion: String?
        var isOptional: Bool
        var isRepeating: Bool
        var shouldDisplay: Bool
        var defaultValue: String?
        var allValues: [String]?
    }

    var commandName: String
    var abstract: String?
    var discussion: String?
    var shouldDisplay: Bool?
    var arguments: [Argument]?
    var subcommands: [CommandHelp]?

    /// The arguments `--help` shows.
    var shownArguments: [Argument] { (arguments ?? []).filter(\.shouldDisplay) }

    /// The subcommands `--help` lists (not `help` itself, nor hidden ones).
    var shownSubcommands: [CommandHelp] {
        (subcommands ?? []).filter { $0.shouldDisplay != false && $0.commandName != "help" }
    }

    /// The whole tool, from the help swift-argument-parser keeps for it.
    static func tool() throws -> CommandHelp {
        struct Dump: Decodable { var command: CommandHelp }
        do {
            return try JSONDecoder().decode(Dump.self, from: Data(Coffer._dumpHelp().utf8)).command
        } catch {
            throw CommandFailure("cannot read this coffer's own help to write its manual: \(error)")
        }
    }
}
