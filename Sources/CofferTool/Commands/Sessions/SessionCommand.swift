import ArgumentParser
import Foundation

/// A command whose work needs OpenID Connect: `login`, `token`, `logout`, `sessions`.
///
/// That work needs `CofferOidc`, which sends HTTP with FoundationNetworking: on Linux, libcurl
/// and the 30 libraries it loads (GnuTLS, Kerberos, LDAP, SSH, …), about 5 ms at every start
/// and a lot of code in a process that holds secrets. So `coffer` declares these commands (their
/// help, man pages and completion come from here) without linking their work, and hands them to
/// `coffer-session`, the same tool with that work in place (``SessionWork``), installed beside it
/// (``SessionHelper``). Every other command starts without loading it.
package protocol SessionCommand: AsyncParsableCommand {}

/// The work of the session commands, given by the executable that links `CofferOidc`
/// (`coffer-session`).
package protocol SessionWork: Sendable {
    /// What is wrong with `name` as a session's name, or `nil`.
    func problem(withName name: String) -> String?

    /// Does `command`'s work.
    func run(_ command: any SessionCommand) async throws

    /// `coffer doctor`'s lines for the sessions in `directory` (which exists).
    func checkSessions(in directory: URL, _ report: (DoctorCommand.Outcome, String, String) -> Void) async
}

/// Where the session commands' work is.
package enum SessionCommands {
    /// The work linked into this process: `nil` in `coffer`, which hands the session commands
    /// to `coffer-session`; `coffer-session` runs the tool with its work in place.
    @TaskLocal package static var work: (any SessionWork)? = nil

    /// The session commands, as the tool lists them.
    static let all: [any SessionCommand.Type] = [LoginCommand.self, TokenCommand.self, LogoutCommand.self, SessionsCommand.self]

    /// Whether `arguments` (the command line without the program's name) name a session
    /// command (`token work`, `help token`): `coffer` hands those to `coffer-session` before
    /// parsing them.
    static func areNamed(in arguments: [String]) -> Bool {
        let names = Set(all.flatMap { [$0._commandName] + $0.configuration.aliases })
        guard let first = arguments.first else { return false }
        return names.contains(first) || (first == "help" && arguments.count > 1 && names.contains(arguments[1]))
    }

    /// The work in this process; where there is none, this process becomes `coffer-session`
    /// with the same command line (and this does not return).
    static func here() throws -> any SessionWork {
        if let work { return work }
        try SessionHelper.handOff()
    }

    /// `<data-dir>/sessions`, where the named sessions are.
    package static func directory(in data: DataOptions) -> URL {
        data.directory.appendingPathComponent("sessions", isDirectory: true)
    }
}
