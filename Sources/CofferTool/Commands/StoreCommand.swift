import ArgumentParser
import Foundation
import CofferStorage

/// `coffer store`: named secrets in encrypted files.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Keep named values encrypted on disk.",
        discussion: """
            With the file backend (the default), each value lives in its own file under \
            <data-dir>/store, sealed with AES-256-GCM and bound to its name, so a file copied over \
            another is detected; the key is kept in <data-dir>/keys (mode 0600).

            With --backend keychain, each value is an item in the OS keyring (Secret Service: \
            gnome-keyring, KeePassXC) with attributes service=org.coffer.store and account=NAME, \
            sealed the same way under a key that is itself kept in the keyring.

            Examples:
              coffer store put api-token 'abc123'
              printf '%s' "$TOKEN" | coffer store put api-token    # not in `ps`
              coffer store get api-token
              coffer store list
              coffer store rotate-key
              coffer store delete api-token
              coffer store put --backend keychain api-token 'abc123'
            """,
        subcommands: [Put.self, Get.self, Delete.self, List.self, RotateKey.self])

    /// The key alias every `coffer store` value is sealed under.
    static let keyAlias = "org.coffer.store"

    /// The keyring `service` attribute of `coffer store` items.
    static let keychainService = "org.coffer.store"


    static func storage(named name: String, in options: DataOptions, backend: StoreBackend) throws -> StorageDelegate<String> {
        try StoreName.check(name)
        switch backend {
        case .file:
            return EncryptedFileStorage<String>(
                fileName: name,
                keyAlias: keyAlias,
                directory: options.directory.appendingPathComponent("store", isDirectory: true),
                keyStore: keyStore(in: options, backend: .file))
        case .keychain:
            return KeychainStorage<String>(
                account: name, service: keychainService,
                encryptor: try SecuredKeyEncryptor.make(keyAlias: keyAlias), cacheStrategy: .noCache)
        }
    }

    /// The stored names (never the values). The store directory is checked like every other
    /// (``FileTrust``); a missing one holds nothing.
    static func names(in options: DataOptions, backend: StoreBackend) async throws -> [String] {
        switch backend {
        case .file:
            let folder = options.directory.appendingPathComponent("store", isDirectory: true)
            guard try FileTrust.checkExistingDirectory(folder.path) else { return [] }
            return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
        case .keychain:
            return try await SecretService().search(["service": keychainService], loadSecrets: false)
                .compactMap { $0.attributes["account"] }.sorted()
        }
    }

    /// Refuses to go on when the key is gone but values sealed with it are stored: a new key
    /// would be made, and the store would end up sealed under two (the old values lost for good
    /// if one of them were then replaced).
    static func requireKeyNotLost(_ options: DataOptions, backend: StoreBackend) async throws {
        guard try await keyStore(in: options, backend: backend).primaryKey(for: keyAlias) == nil else { return }
        let stored = try await names(in: options, backend: backend)
        guard !stored.isEmpty else { return }
        let key = backend == .file
            ? "the key file \(try FileKeyStore(directory: options.directory.appendingPathComponent("keys", isDirectory: true)).fileURL(for: keyAlias).path)"
            : "the keyring's key for \(keyAlias)"
        throw CommandFailure("\(key) is missing, and \(stored.count) stored value(s) are sealed with it. Nothing was stored and "
            + "no new key was made: restore the key from a backup (or remove those values with coffer store delete if they are truly lost).")
    }

    static func keyStore(in options: DataOptions, backend: StoreBackend) -> any KeyStore {
        switch backend {
        case .file: FileKeyStore(directory: options.directory.appendingPathComponent("keys", isDirectory: true))
        case .keychain: SecretServiceKeyStore()
        }
    }

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put",
            abstract: "Store a value under a name, replacing any value it had.",
            discussion: """
                With no VALUE, the value is read from standard input (one trailing newline is \
                dropped). Prefer that for real secrets: command-line arguments are visible to \
                other users in `ps`.

                Examples:
                  coffer store put greeting 'Hello from Coffer'
                  coffer store put db-password < password.txt
                """)

        @Argument(help: "The name to store the value under (letters, digits, '.', '-', '_').")
        var name: String

        @Argument(help: "The value. Omit it to read the value from standard input.")
        var value: String?

        @OptionGroup var options: DataOptions
        @OptionGroup var backend: StoreBackendOption

        func run() async throws {
            try await reportingErrors {
                let value = try self.value ?? readStandardInput()
                try await StoreCommand.requireKeyNotLost(options, backend: try backend.backend())
                try await StoreCommand.storage(named: name, in: options, backend: try backend.backend()).save(item: value)
            }
        }

        private func readStandardInput() throws -> String {
            let data = try StandardStreams.readInput(limit: StandardStreams.valueInputLimit, what: "the value")
            guard var text = String(data: data, encoding: .utf8) else {
                throw CommandFailure("standard input is not UTF-8 text; nothing was stored")
            }
            if text.hasSuffix("\n") { text.removeLast() }
            return text
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Print the value stored under a name.",
            discussion: """
                Exits with status 2 when nothing is stored under the name. At a terminal, control \
                characters in the value are shown escaped (\\u{1b}); piped or redirected, the value \
                is written as it was stored.

                Example:
                  coffer store get greeting
                """)

        @Argument(help: "The name the value was stored under.")
        var name: String

        @OptionGroup var options: DataOptions
        @OptionGroup var backend: StoreBackendOption

        func run() async throws {
            try await reportingErrors {
                guard let value = try await StoreCommand.storage(named: name, in: options, backend: try backend.backend()).get() else {
                    throw CommandFailure.noMatch("nothing is stored under '\(name)'; store it with `coffer store put \(name) VALUE`")
                }
                // At a terminal, escaped as everything the tool prints; piped, the value as stored.
                if isatty(STDOUT_FILENO) == 1 {
                    print(value)
                } else {
                    try StandardStreams.writeOutput(Data((value + "\n").utf8))
                }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete the value stored under a name.",
            discussion: "Deleting a name that holds nothing succeeds.\n\nExample:\n  coffer store delete greeting")

        @Argument(help: "The name to delete.")
        var name: String

        @OptionGroup var options: DataOptions
        @OptionGroup var backend: StoreBackendOption

        func run() async throws {
            try await reportingErrors {
                try await StoreCommand.storage(named: name, in: options, backend: try backend.backend()).delete()
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the stored names (never the values).", discussion: "Examples:\n  coffer store list\n  coffer store list --json")

        @Flag(help: "Print the names as a JSON array.") var json = false
        @OptionGroup var options: DataOptions
        @OptionGroup var backend: StoreBackendOption

        func run() async throws {
            try await reportingErrors {
                let names = try await StoreCommand.names(in: options, backend: try backend.backend())
                if json {
                    try JSONOutput.print(names)
                } else {
                    for name in names { print(name) }
                }
            }
        }
    }

    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Start sealing values with a new key.",
            discussion: """
                Values stored before still open with the old key, which is kept; each is sealed \
                with the new key the next time it is stored. Prints the new key's id.

                Example:
                  coffer store rotate-key
                """)

        @OptionGroup var options: DataOptions
        @OptionGroup var backend: StoreBackendOption

        func run() async throws {
            try await reportingErrors {
                try await StoreCommand.requireKeyNotLost(options, backend: try backend.backend())
                let key = try await StoreCommand.keyStore(in: options, backend: try backend.backend())
                    .rotateKey(for: StoreCommand.keyAlias)
                print("new key id: \(key.id)")
            }
        }
    }
}

/// Where `coffer store` keeps values.
enum StoreBackend: String, ExpressibleByArgument, CaseIterable {
    case file
    case keychain
}

/// `--backend file|keychain`, defaulting to `$COFFER_STORE_BACKEND`, else `file`.
///
/// A variable of its own: the accounts' `COFFER_BACKEND` takes `sqlite|keychain`, and one
/// variable for both made `COFFER_BACKEND=sqlite` meaningless here.
struct StoreBackendOption: ParsableArguments {
    @Option(
        name: .customLong("backend"),
        help: ArgumentHelp(
            "Where values are kept: file (encrypted files, works everywhere) or keychain (the OS keyring).",
            discussion: "Defaults to $COFFER_STORE_BACKEND, else file.",
            valueName: "file|keychain"))
    var explicit: StoreBackend?

    func backend() throws -> StoreBackend {
        if let explicit { return explicit }
        guard let variable = ProcessEnvironment.value("COFFER_STORE_BACKEND"), !variable.isEmpty else { return .file }
        guard let backend = StoreBackend(rawValue: variable) else {
            throw CommandFailure.usage("COFFER_STORE_BACKEND is '\(variable)'; it must be file or keychain")
        }
        return backend
    }
}

/// The names `coffer store` accepts, checked here so that the message speaks of the command,
/// not of the library's parameters.
enum StoreName {
    static func check(_ name: String) throws {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard !name.isEmpty, !name.hasPrefix("."), name.utf8.count <= 200,
              name.unicodeScalars.allSatisfy({ allowed.contains($0) }) else {
            throw CommandFailure("'\(name)' cannot be a store name: use letters, digits, '.', '-' and '_' (not first '.'), at most 200")
        }
    }
}
