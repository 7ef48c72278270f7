import ArgumentParser
import CofferAuthenticator
import Foundation
import Logging
import CofferStorage

/// Where the authenticator keeps accounts.
enum AuthenticatorBackend: String, ExpressibleByArgument, CaseIterable {
    /// `authenticator.sqlite` in the data directory (the default).
    case sqlite
    /// The OS keyring, one sealed item per object.
    case keychain
}

/// Options of every command that reads or changes accounts.
struct AuthenticatorOptions: ParsableArguments {
    @OptionGroup var data: DataOptions

    @Option(
        name: .customLong("backend"),
        help: ArgumentHelp(
            "Where accounts are kept: sqlite (a file in the data directory, works everywhere) or keychain (the OS keyring).",
            discussion: "Defaults to $COFFER_BACKEND, else sqlite.",
            valueName: "sqlite|keychain"))
    var explicitBackend: AuthenticatorBackend?

    func backend() throws -> AuthenticatorBackend {
        if let explicitBackend { return explicitBackend }
        guard let variable = ProcessInfo.processInfo.environment["COFFER_BACKEND"], !variable.isEmpty else { return .sqlite }
        guard let backend = AuthenticatorBackend(rawValue: variable) else {
            throw CommandFailure("COFFER_BACKEND is '\(variable)'; for accounts it must be sqlite or keychain")
        }
        return backend
    }

    /// Opens the storage client (of the chosen backend, or `backend`) and an authenticator over it.
    func open(backend chosen: AuthenticatorBackend? = nil) throws -> (AuthenticatorClient, any StorageClient) {
        let logger = Logger(label: "coffer")
        let storage: any StorageClient
        switch try chosen ?? backend() {
        case .sqlite: storage = try DefaultAuthenticatorStorage.open(directory: data.directory, logger: logger)
        case .keychain: storage = try KeychainStorageClient.make(logger: logger)
        }
        return (AuthenticatorClient(storage: storage, logger: logger), storage)
    }
}

/// Finds accounts by a query a person types: a case-insensitive piece of the issuer or account
/// name, or `issuer:account` for an exact pair.
enum AccountQuery {
    /// The accounts `query` names, with their mechanisms; only their secrets are read.
    static func entries(matching query: String?, _ authenticator: AuthenticatorClient, _ storage: any StorageClient) -> [AccountEntry] {
        let wanted = Set(matches(query, in: storage.getAllAccounts()).map(\.identifier))
        return authenticator.accounts { wanted.contains($0.identifier) }
    }

    static func matches(_ query: String?, in accounts: [Account]) -> [Account] {
        guard let query, !query.isEmpty else { return accounts }
        if let colon = query.firstIndex(of: ":") {
            let issuer = query[..<colon].lowercased(), name = query[query.index(after: colon)...].lowercased()
            let exact = accounts.filter { $0.issuer.lowercased() == issuer && $0.accountName.lowercased() == name }
            if !exact.isEmpty { return exact }
        }
        let needle = query.lowercased()
        return accounts.filter {
            [$0.issuer, $0.accountName, $0.displayIssuer ?? "", $0.displayAccountName ?? ""].contains { $0.lowercased().contains(needle) }
        }
    }

    /// `Issuer: account`, with display names when set.
    static func title(_ account: Account) -> String {
        "\(account.displayIssuer ?? account.issuer): \(account.displayAccountName ?? account.accountName)"
    }
}

/// Writes JSON for `--json` output.
enum JSONOutput {
    static func print<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        Swift.print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}

/// What a command says when stored records cannot be read, instead of acting as if they were
/// not there.
enum UnreadableRecords {
    /// "N stored record(s) cannot be read: why", or `nil` when every record read so far could be.
    static func summary(_ storage: any StorageClient, directory: URL) -> String? {
        guard let diagnostics = storage as? any StorageClientDiagnostics, diagnostics.unreadableRecordCount > 0 else { return nil }
        let count = diagnostics.unreadableRecordCount
        var why = diagnostics.lastError.map { ($0 as? LocalizedError)?.errorDescription ?? "\($0)" } ?? "unknown"
        if let sqlite = storage as? SQLiteStorageClient, sqlite.keyProblem != nil {
            if (try? DefaultAuthenticatorStorage.recordedKeyLocation(in: directory)) == .file,
               let keyFile = try? FileKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true))
                   .fileURL(for: DefaultAuthenticatorStorage.keyAlias),
               !FileManager.default.fileExists(atPath: keyFile.path) {
                why = "the key file \(keyFile.path) is missing"
            } else {
                why = "the store's key cannot be used (\(why))"
            }
        }
        if why.hasSuffix(".") { why.removeLast() }
        return "\(count) stored record(s) cannot be read: \(why). They are left as they are: restore the key "
            + "or the records (see coffer doctor)."
    }
}
