import ArgumentParser
import Foundation
import Storage

/// `coffer store`: named secrets in encrypted files.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Keep named values encrypted on disk.",
        discussion: """
            Each value lives in its own file under <data-dir>/store, sealed with AES-256-GCM and \
            bound to its name, so a file copied over another is detected. The key is kept in \
            <data-dir>/keys (mode 0600).

            Examples:
              coffer store put api-token 'abc123'
              printf '%s' "$TOKEN" | coffer store put api-token     # keeps the value out of `ps`
              coffer store get api-token
              coffer store list
              coffer store rotate-key
              coffer store delete api-token
            """,
        subcommands: [Put.self, Get.self, Delete.self, List.self, RotateKey.self])

    /// The key alias every `coffer store` value is sealed under.
    static let keyAlias = "org.coffer.store"

    static func storage(named name: String, in options: DataOptions) -> EncryptedFileStorage<String> {
        EncryptedFileStorage<String>(
            fileName: name,
            keyAlias: keyAlias,
            directory: options.directory.appendingPathComponent("store", isDirectory: true),
            keyStore: keyStore(in: options))
    }

    static func keyStore(in options: DataOptions) -> FileKeyStore {
        FileKeyStore(directory: options.directory.appendingPathComponent("keys", isDirectory: true))
    }

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
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

        func run() async throws {
            try await reportingErrors {
                let value = try self.value ?? readStandardInput()
                try await StoreCommand.storage(named: name, in: options).save(item: value)
            }
        }

        private func readStandardInput() throws -> String {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            guard var text = String(data: data, encoding: .utf8) else {
                throw CommandFailure("standard input is not UTF-8 text; nothing was stored")
            }
            if text.hasSuffix("\n") { text.removeLast() }
            return text
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the value stored under a name.",
            discussion: "Exits with status 1 when nothing is stored under the name.\n\nExample:\n  coffer store get greeting")

        @Argument(help: "The name the value was stored under.")
        var name: String

        @OptionGroup var options: DataOptions

        func run() async throws {
            try await reportingErrors {
                guard let value = try await StoreCommand.storage(named: name, in: options).get() else {
                    throw CommandFailure("nothing is stored under '\(name)'; store it with `coffer store put \(name) VALUE`")
                }
                print(value)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete the value stored under a name.",
            discussion: "Deleting a name that holds nothing succeeds.\n\nExample:\n  coffer store delete greeting")

        @Argument(help: "The name to delete.")
        var name: String

        @OptionGroup var options: DataOptions

        func run() async throws {
            try await reportingErrors {
                try await StoreCommand.storage(named: name, in: options).delete()
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the stored names (never the values).", discussion: "Example:\n  coffer store list")

        @OptionGroup var options: DataOptions

        func run() async throws {
            try await reportingErrors {
                let folder = options.directory.appendingPathComponent("store", isDirectory: true)
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
                for name in names.filter({ !$0.hasPrefix(".") }).sorted() { print(name) }
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

        func run() async throws {
            try await reportingErrors {
                let key = try await StoreCommand.keyStore(in: options).rotateKey(for: StoreCommand.keyAlias)
                print("new key id: \(key.id)")
            }
        }
    }
}
