import ArgumentParser
import CofferPostgres
import CofferStorage
import Foundation

/// How a command ended, as its exit status. One table for every command, the README's
/// "Exit status" section; scripts tell "nothing matched" from "the keyring is not there" by it.
package enum ExitStatus: Int32, CaseIterable {
    /// Done.
    case done = 0
    /// Failed: what the line on standard error says.
    case failed = 1
    /// Nothing matched the query (no account, no stored name).
    case noMatch = 2
    /// The query matched several accounts where one was needed.
    case ambiguous = 3
    /// Done in part: some of what was asked is done, and what is not is named on standard
    /// output (an import with entries it could not store). Nothing is lost: keep the input.
    case partial = 4
    /// The command line was wrong (an unknown option, a missing argument, options that do not go
    /// together): sysexits' EX_USAGE.
    case usage = 64
    /// Something the command needs did not answer: the keyring, the database server, the TPM
    /// (sysexits' EX_UNAVAILABLE). Trying again later may work; nothing was changed.
    case unavailable = 69
    /// The reader closed standard output (`coffer list --json | head`): the command ends
    /// quietly, as SIGPIPE (128 + 13) ends other tools.
    case readerGone = 141

    package var exitCode: ExitCode { ExitCode(rawValue) }

    /// Its name in a word or two, as `--help` and the README's table begin its meaning.
    var label: String {
        switch self {
        case .done: "done"
        case .failed: "failed"
        case .noMatch: "nothing matched"
        case .ambiguous: "ambiguous"
        case .partial: "done in part"
        case .usage: "usage"
        case .unavailable: "unavailable"
        case .readerGone: "reader gone"
        }
    }

    /// Every status with its label, one line for `coffer --help`.
    static var summary: String {
        "Exit status: " + allCases.map { "\($0.rawValue) \($0.label)" }.joined(separator: ", ")
            + " (coffer man says what each means)."
    }

    /// What the status means, for the manual page: its label, then what it stands for (the
    /// README's table says the same).
    var meaning: String {
        let detail: String? = switch self {
        case .done: nil
        case .failed: "the line on standard error says what and what to do"
        case .noMatch: "no account for the query, nothing stored under the name"
        case .ambiguous: "the query matched several accounts where one was needed"
        case .partial: "some of the work is done; what is not is named on standard output (keep the input, e.g. the export file)"
        case .usage: "the command line was wrong (one line, with the --help to read)"
        case .unavailable: "the keyring, the database server or the TPM did not answer; nothing was changed, try again later"
        case .readerGone: "the reader closed standard output; the command ended quietly"
        }
        return detail.map { "\(label): \($0)" } ?? label
    }

    /// The status for an error a library threw: ``unavailable`` when, anywhere in its chain of
    /// causes, a keyring, a database server or a TPM did not answer; a ``CommandFailure``'s own
    /// status; else ``failed``. Every command classifies its errors here, whatever wrapped the
    /// cause (the sealing layers, the storage clients' errors, the authenticator's).
    static func of(_ error: any Error) -> ExitStatus {
        status(in: error, depth: 0) ?? .failed
    }

    /// The status the first error in `value` and its causes (depth first, up to 8 levels of
    /// wrapping) decides, if any.
    private static func status(in value: Any, depth: Int) -> ExitStatus? {
        switch value {
        case let failure as CommandFailure:
            return failure.status
        case let keychain as KeychainError:
            switch keychain {
            case .unavailable, .timedOut: return .unavailable
            default: break
            }
        case let tpm as TPMError:
            switch tpm {
            case .unavailable, .timedOut: return .unavailable
            default: break
            }
        case let postgres as PostgresStorageError:
            if postgres.code == .unavailable { return .unavailable }
        default:
            break
        }
        guard depth < 8 else { return nil }
        for child in Mirror(reflecting: value).children {
            if let found = status(in: child.value, depth: depth + 1) { return found }
        }
        return nil
    }
}
