import ArgumentParser
import CofferAuthenticator
import CofferPostgres
import CofferStorage
import Foundation

/// `coffer key`: where the accounts' key is kept.
struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Show or move the key that seals the accounts' secrets.",
        subcommands: [Show.self, Move.self, Passwd.self, Forget.self, NewKEK.self],
        defaultSubcommand: Show.self)

    /// Where the accounts' key is kept, in words.
    static func describe(_ location: KeyStoreSelection.Location, in directory: URL) throws -> String {
        switch location {
        case .secretService: "the OS keyring (Secret Service), as item service org.coffer.keys, alias \(DefaultAuthenticatorStorage.keyAlias)"
        case .file: "the file \(try keyFile(in: directory).path)"
        case .tpm: "the TPM (\(TrustedPlatformModule.fromEnvironment().location)), sealed in \(try tpmKeyFile(in: directory).path)"
        case .passphrase: "the file \(try passphraseStore(in: directory).fileURL(for: DefaultAuthenticatorStorage.keyAlias).path), under a passphrase"
        }
    }

    /// What finishing an interrupted key move did, in words.
    static func describe(_ recovery: KeyMove.Recovery) -> String {
        let move = recovery.move, place = recovery.place.rawValue
        let what = recovery.finished
            ? "finished the key move to \(move.to.rawValue) that was interrupted"
            : "undid the key move to \(move.to.rawValue) that was interrupted before it was recorded (the key stays in \(move.from.rawValue))"
        switch recovery.copy {
        case .deleted: return "\(what): the copy in \(place) was removed"
        case .absent: return "\(what)"
        case .keptShared:
            return "\(what); the OS keyring keeps its copy, one item for all your data directories: if no other directory uses it, "
                + "remove it with secret-tool clear service org.coffer.keys alias \(DefaultAuthenticatorStorage.keyAlias)"
        case .keptDifferent: return "\(what); \(place) holds another key than the store's, left as it is"
        }
    }

    static func passphraseStore(in directory: URL) -> PassphraseKeyStore {
        PassphraseKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true), passphrase: KeyPassphrase.ask)
    }

    static func tpmKeyFile(in directory: URL) throws -> URL {
        try TPMKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true))
            .fileURL(for: DefaultAuthenticatorStorage.keyAlias)
    }

    static func keyFile(in directory: URL) throws -> URL {
        try FileKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true)).fileURL(for: DefaultAuthenticatorStorage.keyAlias)
    }

    static func store(_ location: KeyStoreSelection.Location, in directory: URL) -> any KeyRingStore {
        KeyStoreSelection.store(location, in: directory, tpmPIN: TPMPIN.ask, passphrase: KeyPassphrase.ask)
    }

    /// `coffer key new-kek [PATH]`: the key-encryption key of the postgres backend.
    struct NewKEK: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new-kek",
            abstract: "Make the key-encryption key for the postgres backend.",
            discussion: """
                Writes a new random 256-bit key-encryption key to PATH (default: keys/postgres.kek in the \
                data directory), 0600 from the first byte, and prints its fingerprint. A missing directory \
                is made, 0700. An existing file is \
                never replaced. Every instance that shares the database needs the same file (point \
                COFFER_DATABASE_KEK at it): it wraps the data keys kept in the database and never enters it, \
                so keep a copy somewhere safe.

                With --tpm the key is sealed by this machine's TPM instead (PATH ends in .tpm-key; default \
                keys/postgres-kek.tpm-key), and COFFER_DATABASE_KEK=tpm:PATH uses it: no disk holds it in \
                the clear. --from FILE seals an existing key (the one the other instances share) rather \
                than a new one; remove FILE afterwards if it has a copy somewhere safe. Under systemd, \
                `systemd-creds encrypt` and LoadCredentialEncrypted= do the same for a plain key file, and \
                COFFER_DATABASE_KEK=credential:NAME reads it.

                Examples:
                  coffer key new-kek
                  coffer key new-kek /etc/coffer/postgres.kek
                  coffer key new-kek --tpm
                  coffer key new-kek --tpm --from /root/postgres.kek /etc/coffer/postgres-kek.tpm-key
                """)

        @Argument(help: "Where to write it.") var path: String?
        @Flag(help: "Seal it with this machine's TPM (COFFER_TPM_TCTI names which).") var tpm = false
        @Option(help: ArgumentHelp("With --tpm: seal the key in this file instead of a new one.", valueName: "file"))
        var from: String?
        @OptionGroup var data: DataOptions

        func run() async throws {
            try await reportingErrors {
                if tpm {
                    TPMNetworkWarning.warnIfNetwork()
                    let target = path ?? data.directory.appendingPathComponent("keys/postgres-kek.tpm-key").path
                    let parent = URL(fileURLWithPath: target).deletingLastPathComponent()
                    if !FileManager.default.fileExists(atPath: parent.path) { try FileTrust.prepareDirectory(parent) }
                    let kek = try from.map { try KeyEncryptionKey.load(fromFile: $0) } ?? KeyEncryptionKey.random()
                    try await kek.sealToTPM(file: target)
                    print("Sealed \(from == nil ? "a new" : "the") key-encryption key with the TPM in \(target) (fingerprint \(kek.fingerprint)).")
                    print("Use it with COFFER_DATABASE_KEK=tpm:\(target); only this machine's TPM opens it.")
                    if from == nil {
                        print("Other instances need the same key: this one exists only here, so make the key with plain `coffer key new-kek` "
                            + "and seal it on each machine with --from if several instances share the database.")
                    }
                    return
                }
                if from != nil { throw CommandFailure("--from goes with --tpm") }
                let target = path ?? PostgresBackend.defaultKEKPath(in: data.directory)
                // The directory is made (0700) when missing, as the advice to run this command assumes.
                let parent = URL(fileURLWithPath: target).deletingLastPathComponent()
                if path == nil || !FileManager.default.fileExists(atPath: parent.path) { try FileTrust.prepareDirectory(parent) }
                let kek = try KeyEncryptionKey.create(atFile: target)
                print("Made a key-encryption key in \(target) (fingerprint \(kek.fingerprint)).")
                print("Keep a copy somewhere safe: without it the secrets in the database cannot be opened.")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Say where the key is.", discussion: "Example:\n  coffer key show")

        @OptionGroup var data: DataOptions

        func run() async throws {
            try await reportingErrors {
                guard let location = try DefaultAuthenticatorStorage.recordedKeyLocation(in: data.directory) else {
                    print("No key yet: the first coffer add makes one (in the OS keyring when it is usable, else in a 0600 file).")
                    return
                }
                print("The accounts' key is in \(try KeyCommand.describe(location, in: data.directory)).")
            }
        }
    }

    /// `coffer key forget`: drops the passphrase-derived key from the kernel keyring.
    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "forget",
            abstract: "Forget the remembered passphrase-derived key now.",
            discussion: """
                With the key under a passphrase and --remember, the derived key is kept in the kernel's \
                user keyring for a while after each use. This drops it, so the next command asks for the \
                passphrase again.

                Example:
                  coffer key forget
                """)

        @OptionGroup var data: DataOptions

        func run() async throws {
            try await reportingErrors {
                let forgot = try KeyCommand.passphraseStore(in: data.directory).forget(alias: DefaultAuthenticatorStorage.keyAlias)
                print(forgot ? "Forgot the remembered key; the next command asks for the passphrase." : "No key was remembered.")
            }
        }
    }

    struct Move: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "move",
            abstract: "Move the key between the OS keyring, the TPM and a 0600 key file.",
            discussion: """
                The key moves unchanged, so nothing is sealed again and every secret opens as \
                before: it is copied, checked against the store, recorded as the key to use, \
                and only then removed from where it was. Run it where both places work: to \
                take the key out of the keyring (for use over SSH or on a server), in the \
                desktop session whose keyring holds it.

                --to passphrase seals the key under a passphrase (scrypt; asked at the terminal, or \
                read from --password-file, $COFFER_KEY_PASSWORD_FILE or $COFFER_KEY_PASSWORD), for \
                machines with neither a keyring session nor a TPM. --remember 8h keeps the derived \
                key in the kernel's user keyring for that long after each use, so a day of commands \
                asks once; `coffer key forget` drops it.

                --to tpm seals the key with this machine's TPM 2.0 (the one COFFER_TPM_TCTI names, \
                else /dev/tpmrm0): a copy of the data directory, a backup or the disk opens nothing \
                elsewhere. Keep a way back: a backup made with `coffer export`, or the key moved to a \
                file first and stored safely. --pin adds a PIN the TPM checks (and locks out after a \
                few wrong ones); --pcrs binds the key to PCR values, which a firmware or boot loader \
                update changes: move the key to a file before such an update.

                Examples:
                  coffer key move --to file
                  coffer key move --to keyring
                  coffer key move --to tpm
                  coffer key move --to tpm --pin --pcrs 7
                  coffer key move --to passphrase --remember 8h
                """)

        enum Place: String, ExpressibleByArgument, CaseIterable {
            case file, keyring, tpm, passphrase

            var location: KeyStoreSelection.Location {
                switch self {
                case .file: .file
                case .keyring: .secretService
                case .tpm: .tpm
                case .passphrase: .passphrase
                }
            }
        }

        @Option(help: "Where the key goes.") var to: Place
        @Flag(help: "With --to tpm: protect the key with a PIN, asked at the terminal (or read from $COFFER_TPM_PIN_FILE).")
        var pin = false
        @Option(help: ArgumentHelp("With --to tpm: bind the key to these SHA-256 PCRs (0-23, comma-separated), for example 7.",
                                   valueName: "list"))
        var pcrs: String?
        @Option(help: ArgumentHelp("With --to passphrase: keep the derived key in the kernel's user keyring this long after each use (30m, 8h, 1d; at most 7d).",
                                   valueName: "duration"))
        var remember: String?
        @Option(name: .customLong("password-file"), help: ArgumentHelp("With --to passphrase: read the new passphrase from this file (first line).", valueName: "path"))
        var passwordFile: String?
        @OptionGroup var data: DataOptions

        /// The store the key goes to: for the TPM, with the PIN and PCRs asked for.
        func target(in directory: URL) throws -> any KeyRingStore {
            if to != .tpm, pin || pcrs != nil { throw CommandFailure("--pin and --pcrs go with --to tpm") }
            if to != .passphrase, remember != nil || passwordFile != nil {
                throw CommandFailure("--remember and --password-file go with --to passphrase")
            }
            if to == .passphrase {
                var kept: Duration?
                if let remember {
                    guard let seconds = HumanDuration.seconds(remember), seconds <= 7 * 86400 else {
                        throw CommandFailure("--remember takes a duration up to 7d, such as 30m, 8h or 1d; '\(remember)' is not one")
                    }
                    kept = .seconds(seconds)
                }
                let passphrase = try KeyPassphrase.choose(file: passwordFile)
                return PassphraseKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true), remember: kept,
                                          passphrase: { @Sendable in passphrase })
            }
            guard to == .tpm else { return KeyCommand.store(to.location, in: directory) }
            var indexes: [Int] = []
            for part in (pcrs ?? "").split(separator: ",") {
                guard let index = Int(part.trimmingCharacters(in: .whitespaces)), (0..<24).contains(index),
                      !indexes.contains(index) else {
                    throw CommandFailure("--pcrs takes PCR numbers from 0 to 23, comma-separated (for example 7); '\(part)' is not one")
                }
                indexes.append(index)
            }
            let newPIN = pin ? try TPMPIN.choose() : nil
            return TPMKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true), pcrs: indexes,
                               pin: newPIN.map { chosen in { @Sendable in chosen } })
        }

        func run() async throws {
            try await reportingErrors {
                let directory = data.directory
                let move = DefaultAuthenticatorStorage.keyMove(in: directory, tpmPIN: TPMPIN.ask, passphrase: KeyPassphrase.ask)
                // A move a killed process left is finished (or rolled back) first, under the same
                // lock as every move: two moves the opposite ways at once cannot each remove the
                // copy the other just made.
                if let recovery = try await move.finishInterrupted() { StandardStreams.note("coffer: \(KeyCommand.describe(recovery))") }
                let recorded = try DefaultAuthenticatorStorage.recordedKeyLocation(in: directory)
                if recorded == .tpm || to == .tpm { TPMNetworkWarning.warnIfNetwork() }
                if let recorded, recorded == to.location {
                    guard try await KeyCommand.store(recorded, in: directory).keyRing(for: DefaultAuthenticatorStorage.keyAlias) != nil else {
                        throw KeyMove.Failure.keyMissing(recorded)
                    }
                    // Copies a move before this version left where the record does not say the
                    // key is (a key file in the clear beside a sealed key) go now.
                    var removed: [String] = []
                    for place in try await move.strayCopies() where try await move.removeStrayCopy(in: place) {
                        removed.append(try KeyCommand.describe(place, in: directory))
                    }
                    let left = try await move.strayCopies()
                    print("The key is already in \(try KeyCommand.describe(recorded, in: directory))."
                        + (removed.isEmpty ? "" : " Removed the copy left in \(removed.joined(separator: " and ")) by an interrupted move."))
                    if !left.isEmpty {
                        throw CommandFailure("\(try left.map { try KeyCommand.describe($0, in: directory) }.joined(separator: " and ")) "
                            + "holds another key than the store's, left as it is: move it aside if nothing needs it")
                    }
                    return
                }
                let target = try target(in: directory)
                let outcome: KeyMove.Outcome
                do {
                    outcome = try await move.move(to: to.location, into: target) { copy in
                        // The store must open with the moved key before anything is removed.
                        let check = try SQLiteStorageClient(
                            path: DefaultAuthenticatorStorage.databaseURL(in: directory).path,
                            encryptor: AESGCMEncryptor(keyAlias: DefaultAuthenticatorStorage.keyAlias, keyStore: copy), connections: .single)
                        if let problem = check.keyProblem {
                            throw CommandFailure("the copied key does not open the store (\((problem as? LocalizedError)?.errorDescription ?? "\(problem)")); "
                                + "the copy was removed and the store still uses the key where it was")
                        }
                    }
                } catch KeyMove.Failure.noKey {
                    throw CommandFailure("there is no key yet; coffer add makes one")
                }
                print("Moved the key to \(try KeyCommand.describe(to.location, in: directory)); nothing was sealed again.")
                if outcome.keptIn == .secretService {
                    print("The OS keyring keeps its copy: it is one item for all your data directories (service org.coffer.keys, alias "
                        + "\(DefaultAuthenticatorStorage.keyAlias)). If no other directory uses it, remove it: "
                        + "secret-tool clear service org.coffer.keys alias \(DefaultAuthenticatorStorage.keyAlias)")
                }
            }
        }
    }
}
