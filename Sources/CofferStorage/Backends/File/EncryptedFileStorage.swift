import Foundation
import Logging

/// Keeps a value in a file, encrypted: the spec's Android `EncryptedDataStoreStorage`.
///
/// The value is serialised to JSON, bound to its file name (see ``IdentityBinding``) and sealed
/// by an ``AESGCMEncryptor`` in a ``SealedEnvelope``. Writes are atomic and durable and safe
/// between processes; the file is 0600 in a directory created 0700. A damaged, truncated,
/// tampered, swapped or wrong-key file makes ``StorageDelegate/get()`` throw and is left as it is.
///
/// ```swift
/// let storage = EncryptedFileStorage<Dog>(fileName: "com.example.safe", keyAlias: "com.example.v1.KEYS")
/// try await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever"))
/// let dog = try await storage.get()
/// ```
public final class EncryptedFileStorage<T: Codable & Sendable>: StorageDelegate<T>, @unchecked Sendable {
    // @unchecked Sendable: adds only immutable properties to StorageDelegate (which is safe).

    /// The file that holds the sealed value.
    public let fileURL: URL
    /// The encryptor that seals the file; use it to rotate the key.
    public let encryptor: AESGCMEncryptor
    /// The file item, for ``rotateKey()``'s look at what a first key would strand.
    private let item: FileItem<T>

    /// Creates an encrypted-file storage.
    ///
    /// - Parameters:
    ///   - fileName: The file's name inside `directory`. It must not contain `/` or start with `.`.
    ///   - keyAlias: The alias of the key in the key store. Defaults to `fileName`.
    ///   - directory: Where the file lives. Defaults to ``DataDirectory/default``.
    ///   - keyStore: Where the key lives. Defaults to a ``FileKeyStore`` in `directory/keys`.
    ///   - strongBoxPreferred: When no `keyStore` is given, keep the key in the OS keyring
    ///     (``SecretServiceKeyStore``) if it is usable the first time, else in the file key store;
    ///     the choice is logged and recorded in `directory/keystore` and followed from then on (see
    ///     ``KeyStoreSelection``). Checking blocks this initializer for up to 3 seconds on an
    ///     unresponsive keyring.
    ///   - cacheStrategy: How to keep a (plaintext) memory copy. Defaults to ``CacheStrategy/noCache``.
    ///   - logger: Receives warnings about absorbed failures and the key store choice.
    public init(
        fileName: String,
        keyAlias: String? = nil,
        directory: URL? = nil,
        keyStore: (any KeyStore)? = nil,
        strongBoxPreferred: Bool = false,
        cacheStrategy: CacheStrategy = .noCache,
        logger: Logger = Logger(label: "org.coffer.storage.file")
    ) {
        let directory = directory ?? DataDirectory.default
        let keyStore = keyStore ?? KeyStoreSelection.forFiles(
            in: directory, strongBoxPreferred: strongBoxPreferred, logger: logger)
        let encryptor = AESGCMEncryptor(keyAlias: keyAlias ?? fileName, keyStore: keyStore)
        let item = FileItem<T>(directory: directory, fileName: fileName, sealing: .sealed(encryptor))
        self.fileURL = item.file.url
        self.encryptor = encryptor
        self.item = item
        super.init(delegate: item, cacheStrategy: cacheStrategy, logger: logger)
    }

    /// Creates an encrypted-file storage from a configuration block, in the style of the spec's
    /// Android builder:
    ///
    /// ```swift
    /// let storage = EncryptedFileStorage<String> { config in
    ///     config.fileName = "com.example.safe"
    ///     config.keyAlias = "com.example.v1.KEYS"
    /// }
    /// ```
    public convenience init(_ configure: (inout FileStorageConfiguration) -> Void) {
        var configuration = FileStorageConfiguration()
        configure(&configuration)
        self.init(
            fileName: configuration.fileName,
            keyAlias: configuration.keyAlias,
            directory: configuration.directory,
            keyStore: configuration.keyStore,
            strongBoxPreferred: configuration.strongBoxPreferred,
            cacheStrategy: configuration.cacheStrategy,
            logger: configuration.logger)
    }

    /// Makes a new primary key for this storage's alias and returns its id. The stored value still
    /// opens; the next ``StorageDelegate/save(item:)`` seals it under the new key.
    ///
    /// - Throws: ``StorageError/keyMissing(location:keyAlias:keyID:)`` when the key store holds
    ///   no key but the file, or another file in its directory sealed under the same alias, is
    ///   sealed under one: a "rotation" would start a second key.
    @discardableResult
    public func rotateKey() async throws -> UInt32 {
        if try await encryptor.hasPrimaryKey() { return try await encryptor.rotateKey() }
        return try await item.firstKeySection {
            if try await !encryptor.hasPrimaryKey(), let stranded = try item.sealedValue(under: encryptor.keyAlias) {
                throw StorageError.keyMissing(location: stranded.location, keyAlias: encryptor.keyAlias, keyID: stranded.keyID)
            }
            return try await encryptor.rotateKey()
        }
    }
}

/// The settings of an ``EncryptedFileStorage``, for its configuration-block initializer.
public struct FileStorageConfiguration: Sendable {
    /// The file's name. Defaults to `com.coffer.v1.tokens`.
    public var fileName = "com.coffer.v1.tokens"
    /// The key alias. Defaults to the file name.
    public var keyAlias: String?
    /// The directory. Defaults to ``DataDirectory/default``.
    public var directory: URL?
    /// The key store. Defaults to a ``FileKeyStore`` beside the file.
    public var keyStore: (any KeyStore)?
    /// Prefer the OS keyring for the key.
    public var strongBoxPreferred = false
    /// How to keep a memory copy.
    public var cacheStrategy = CacheStrategy.noCache
    /// Where warnings go.
    public var logger = Logger(label: "org.coffer.storage.file")

    /// The defaults.
    public init() {}
}

/// Picks the key store for data kept in files: the OS keyring when preferred and usable, else a
/// 0600 key file — and remembers the choice.
///
/// The choice is made once per directory and recorded in a small file there (`keystore` by
/// default: `secret-service` or `file`). Later uses follow the record: if it says the keyring and
/// the keyring cannot be used now, the key store reports that instead of silently switching to a
/// key file, which would leave data sealed under two keys.
public enum KeyStoreSelection {
    /// Where a directory's key is kept.
    public enum Location: String, Sendable {
        /// The OS keyring (``SecretServiceKeyStore``).
        case secretService = "secret-service"
        /// A 0600 file in `<directory>/keys` (``FileKeyStore``).
        case file
        /// Sealed by this machine's TPM, in `<directory>/keys` (``TPMKeyStore``; the TPM that
        /// `COFFER_TPM_TCTI` names, else tpm2-tss's default). Chosen only on request: a recorded
        /// TPM that cannot be used is an error, never a fall back to a key file.
        case tpm
        /// Under a passphrase, in `<directory>/keys` (``PassphraseKeyStore``). Chosen only on
        /// request.
        case passphrase
    }

    /// The key store for `location` in `directory`: the same one `recorded(in:)` opens.
    /// `tpmPIN` answers when a TPM-sealed key has a PIN; `passphrase` when the key is under a
    /// passphrase (without it, such a key store throws ``SelectionError/passphraseRequired``).
    public static func store(
        _ location: Location, in directory: URL, tpmPIN: (@Sendable () async throws -> String)? = nil,
        passphrase: (@Sendable () async throws -> String)? = nil
    ) -> any KeyRingStore {
        let keys = directory.appendingPathComponent("keys", isDirectory: true)
        switch location {
        case .secretService: return SecretServiceKeyStore()
        case .file: return FileKeyStore(directory: keys)
        case .tpm: return TPMKeyStore(directory: keys, tpm: .fromEnvironment(), pin: tpmPIN)
        case .passphrase:
            return PassphraseKeyStore(directory: keys, passphrase: passphrase ?? { throw SelectionError.passphraseRequired })
        }
    }

    /// Why the recorded key store cannot be used.
    public enum SelectionError: Error, LocalizedError, Sendable {
        /// The record says the keyring, and the keyring cannot be used now.
        case keyringRequired(KeychainError)
        /// The record names no known key store.
        case unknownLocation(path: String, text: String)
        /// The record cannot be read (or is not safe to trust: see ``FileTrust``).
        case unreadable(path: String, cause: StorageError)
        /// The key is under a passphrase and nothing was given to ask for it.
        case passphraseRequired

        /// What went wrong and what to do: which record to restore, or why the keyring is needed.
        public var errorDescription: String? {
            switch self {
            case .keyringRequired(let reason):
                return "This store keeps its key in the OS keyring, which cannot be used now: "
                    + (reason.errorDescription ?? "\(reason)")
            case let .unknownLocation(path, _):
                return "\(path) does not say 'secret-service', 'file', 'tpm' or 'passphrase', as it should. Restore it."
            case let .unreadable(_, cause):
                return cause.errorDescription
            case .passphraseRequired:
                return "This store's key is under a passphrase, and none was given."
            }
        }
    }

    /// The location recorded in `directory`, or `nil` before the first choice.
    public static func recordedLocation(in directory: URL, record: String = "keystore") throws(SelectionError) -> Location? {
        let file = RecordFile(directory.appendingPathComponent(record))
        let text: String?
        do {
            text = try file.read()
        } catch {
            throw .unreadable(path: file.path, cause: error)
        }
        guard let text else { return nil }
        guard let location = Location(rawValue: text) else { throw .unknownLocation(path: file.path, text: text) }
        return location
    }

    /// The key store recorded for `directory`; on first use, the keyring when it is usable and a
    /// key file otherwise, recorded for next time. Logs the choice. `tpmPIN` and `passphrase`
    /// answer when the recorded key store is the TPM with a PIN, or a passphrase.
    public static func recorded(
        in directory: URL, record: String = "keystore", logger: Logger,
        tpmPIN: (@Sendable () async throws -> String)? = nil,
        passphrase: (@Sendable () async throws -> String)? = nil
    ) throws -> any KeyStore {
        let fileStore = FileKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true))
        switch try recordedLocation(in: directory, record: record) {
        case .secretService?:
            if let problem = SecretService(timeout: .seconds(3)).usabilityProblem() { throw SelectionError.keyringRequired(problem) }
            return SecretServiceKeyStore()
        case .file?:
            return fileStore
        case .tpm?:
            return store(.tpm, in: directory, tpmPIN: tpmPIN)
        case .passphrase?:
            return store(.passphrase, in: directory, passphrase: passphrase)
        case nil:
            let location: Location
            if let problem = SecretService(timeout: .seconds(3)).usabilityProblem() {
                logger.notice("the OS keyring cannot be used; keeping the key in a 0600 file",
                              metadata: ["directory": "\(fileStore.directory.path)", "reason": "\(problem)"])
                location = .file
            } else {
                logger.info("keeping the key in the OS keyring (Secret Service)")
                location = .secretService
            }
            try RecordFile(directory.appendingPathComponent(record)).write(location.rawValue)
            return location == .file ? fileStore : SecretServiceKeyStore()
        }
    }

    /// With `strongBoxPreferred`, the ``recorded(in:record:logger:tpmPIN:passphrase:)`` key store (one that throws
    /// the reason on every call when it cannot be used); without, a ``FileKeyStore`` in
    /// `directory/keys`.
    public static func forFiles(in directory: URL, strongBoxPreferred: Bool, logger: Logger) -> any KeyStore {
        guard strongBoxPreferred else {
            return FileKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true))
        }
        do {
            return try recorded(in: directory, logger: logger)
        } catch {
            logger.error("the recorded key store cannot be used; every operation will fail until it can",
                         metadata: ["directory": "\(directory.path)", "reason": "\(error)"])
            return UnusableKeyStore(reason: error)
        }
    }
}

/// Stands in for a key store that cannot be used: every call throws the reason.
struct UnusableKeyStore: KeyStore {
    let reason: any Error

    func primaryKey(for alias: String) async throws -> VersionedKey? { throw reason }
    func key(for alias: String, id: UInt32) async throws -> VersionedKey? { throw reason }
    func createKey(for alias: String) async throws -> VersionedKey { throw reason }
    func rotateKey(for alias: String) async throws -> VersionedKey { throw reason }
    func deleteKeys(for alias: String) async throws { throw reason }
}
