import CofferOidc
import CofferStorage
import CofferTool
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The tool's words and statuses for what signing in and refreshing can throw.
enum SessionFailure {
    static func of(_ error: any Error) -> any Error {
        switch error {
        case OidcSessionError.notFound(let name):
            return CommandFailure.noMatch("there is no session '\(TerminalText.escaped(name))' (coffer sessions lists them)")
        case OidcSessionError.badName(let problem), OidcSessionError.badIssuer(let problem):
            return CommandFailure.usage(problem)
        case let error as OidcError:
            if case .networkError = error { return CommandFailure(error.errorMessage + " (is the provider reachable?)", status: .unavailable) }
            if case .unknown(let cause as URLError, _) = error { return CommandFailure("the provider cannot be reached: \(cause.localizedDescription)", status: .unavailable) }
            return CommandFailure(error.errorMessage + (error.recoverySuggestion.map { " " + $0 } ?? ""))
        case let error as URLError:
            return CommandFailure("the provider cannot be reached: \(error.localizedDescription)", status: .unavailable)
        default:
            return error
        }
    }
}
