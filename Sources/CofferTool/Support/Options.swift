import ArgumentParser
import Foundation
import Logging
import CofferStorage
import CofferAuthenticator

/// Options every command that touches stored data takes.
package struct DataOptions: ParsableArguments {
    package init() {}

    @Option(
        name: .customLong("data-dir"),
        help: ArgumentHelp(
            "Where Coffer keeps its files.",
            discussion: "Defaults to $COFFER_HOME, else $XDG_DATA_HOME/coffer, else ~/.local/share/coffer.",
            valueName: "path"))
    var dataDirectory: String?

    /// The data directory in effect.
    package var directory: URL {
        if let dataDirectory { return URL(fileURLWithPath: dataDirectory, isDirectory: true) }
        if let home = ProcessEnvironment.value("COFFER_HOME"), !home.isEmpty {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        return DataDirectory.default
    }
}

/// Reads the log level from `COFFER_LOG_LEVEL` (trace, debug, info, notice, warning, error,
/// critical). By default only critical lines: every command says what went wrong itself, in
/// one `coffer:` line, and the libraries' log lines for the same failure would only repeat it
/// (errors are one line on stderr). Set the variable to see them.
enum LogLevelOption {
    static func fromEnvironment() -> Logger.Level {
        ProcessEnvironment.value("COFFER_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .critical
    }
}

/// An error worth one line on stderr, and its exit status (``ExitStatus``; 1 unless it says).
package struct CommandFailure: Error, CustomStringConvertible {
    package let description: String
    /// The exit status: ``ExitStatus/failed`` unless the failure is one scripts tell apart.
    package let status: ExitStatus
    package init(_ message: String, status: ExitStatus = .failed) {
        description = message
        self.status = status
    }

    /// Nothing matched `query` (exit status 2).
    package static func noMatch(_ message: String) -> CommandFailure { CommandFailure(message, status: .noMatch) }
    /// Several accounts matched where one was needed (exit status 3).
    package static func ambiguous(_ message: String) -> CommandFailure { CommandFailure(message, status: .ambiguous) }
    /// The command line does not go together (exit status 64), said in one line.
    package static func usage(_ message: String) -> CommandFailure { CommandFailure(message, status: .usage) }
}

extension ParsableCommand {
    /// Runs `body`, turning any error into one line on stderr (`coffer: message`) and the exit
    /// status of its kind (``ExitStatus/of(_:)``).
    package func reportingErrors(_ body: () async throws -> Void) async throws {
        do {
            try await CommandServices.running(body)
        } catch let error as any ExitCodeConvertible & Error {
            throw error
        } catch let error as CleanExit {
            throw error
        } catch AuthenticatorError.storageFailed(_, let floor as HOTPCounterFloorError) {
            let failure = CommandFailure(floor)
            StandardStreams.note("coffer: \(failure)")
            throw failure.status.exitCode
        } catch AuthenticatorError.storageFailed(_, let failure as CommandFailure) {
            // The tool's own words, from a hook it gave the library (the counter floor).
            StandardStreams.note("coffer: \(failure)")
            throw failure.status.exitCode
        } catch AuthenticatorError.storageFailed(_, StorageClientError.keyUnavailable(let cause)?) {
            throw Self.keyUnavailable(cause)
        } catch StorageClientError.keyUnavailable(let cause) {
            throw Self.keyUnavailable(cause)
        } catch {
            let message = (error as? LocalizedError)?.errorDescription ?? String(describing: error)
            StandardStreams.note("coffer: \(message)")
            throw ExitStatus.of(error).exitCode
        }
    }
}

extension ParsableCommand {
    /// Says what to do about a key that does not open the store, as list says it (not the
    /// layers that wrapped it), and returns the exit status of its cause.
    fileprivate static func keyUnavailable(_ cause: any Error) -> ExitCode {
        StandardStreams.note("coffer: \(UnreadableRecords.keyAdvice(cause)) Nothing new is sealed until then "
            + "(that would leave the store under two keys).")
        return ExitStatus.of(cause).exitCode
    }
}

extension CommandFailure {
    /// The tool's words for why the HOTP counter rule stopped an add: what to do first, with
    /// the commands that do it.
    init(_ floor: HOTPCounterFloorError) {
        switch floor {
        case .secretHeldBy(let account):
            self.init("Use the account \(AccountQuery.title(account)) (rename it with coffer rename), or remove it first: "
                + "it holds this HOTP secret already, and two accounts with one HOTP secret would issue the same codes.")
        case let .ledgerUnreadable(ledger, cause):
            let reason = (cause as? LocalizedError)?.errorDescription ?? "\(cause)"
            let place = (ledger as? SealedCounterLedgerFile).map { "Restore \($0.file.path) from a backup (moved aside, a new empty record "
                + "starts, and a HOTP secret used before could then issue codes its server has seen)" } ?? "Check the store and try again"
            self.init("\(place): it remembers the HOTP counters Coffer has used, and cannot be read (\(reason)). "
                + "No HOTP account is added until then.", status: ExitStatus.of(cause))
        case .rememberedUnreadable(let failure as CommandFailure):
            self = failure
        case .rememberedUnreadable:
            self.init(floor.errorDescription ?? "\(floor)")
        }
    }

    /// What to say of `error` in one line: the tool's words for the library's errors that have
    /// them, else the error's own description.
    static func words(for error: any Error) -> String {
        if case AuthenticatorError.storageFailed(_, let floor as HOTPCounterFloorError)? = error as? AuthenticatorError {
            return CommandFailure(floor).description
        }
        return (error as? LocalizedError)?.errorDescription ?? "\(error)"
    }
}

private protocol ExitCodeConvertible {}
extension ExitCode: ExitCodeConvertible {}
