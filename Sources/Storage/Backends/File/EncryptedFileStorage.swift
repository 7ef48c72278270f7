import Foundation
import Logging

/// Keeps a value in a file, encrypted: the spec's Android `EncryptedDataStoreStorage`.
///
/// The value is serialised to JSON, bound to its file name (see ``IdentityBinding``) and sealed
/// by an ``AESGCMEncryptor`` in a ``SealedEnvelope``. Writes are atomic and durable and safe
/// between processes; the file is 0600 in a directory created 0700. A damaged, truncated,
/// tampered, swapped or wrong-key file makes ``get()`` throw and is left as it is.
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

    /// Creates an encrypted-file storage.
    ///
    /// - Parameters:
    ///   - fileName: The file's name inside `directory`. It must not contain `/` or start with `.`.
    ///   - keyAlias: The alias of the key in the key store. Defaults to `fileName`.
    ///   - directory: Where the file lives. Defaults to ``DataDirectory/default``.
    ///   - keyStore: Where the key lives. Defaults to a ``FileKeyStore`` in `directory/keys`.
    ///   - strongBoxPreferred: When no `keyStore` is given, keep the key in the OS keyring
    ///     (``SecretServiceKeyStore``) if it is usable now, else in the file key store; the choice
    ///     is logged. Checking blocks this initializer for up to 3 seconds on an unresponsive
    ///     keyring.
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
    /// opens; the next ``save(item:)`` seals it under the new key.
    @discardableResult
    public func rotateKey() async throws -> UInt32 {
        try await encryptor.rotateKey()
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
/// 0600 key file.
public enum KeyStoreSelection {
    /// With `strongBoxPreferred`, a ``SecretServiceKeyStore`` when the keyring is usable now; else
    /// (or without the preference) a ``FileKeyStore`` in `directory/keys`. Logs the choice. The
    /// check blocks for up to 3 seconds on an unresponsive keyring.
    public static func forFiles(in directory: URL, strongBoxPreferred: Bool, logger: Logger) -> any KeyStore {
        let fileStore = FileKeyStore(directory: directory.appendingPathComponent("keys", isDirectory: true))
        guard strongBoxPreferred else { return fileStore }
        if let problem = SecretService(timeout: .seconds(3)).usabilityProblem() {
            logger.notice(
                "strongBoxPreferred: the OS keyring cannot be used; keeping the key in a 0600 file instead",
                metadata: ["directory": "\(fileStore.directory.path)", "reason": "\(problem)"])
            return fileStore
        }
        logger.info("strongBoxPreferred: keeping the key in the OS keyring (Secret Service)")
        return SecretServiceKeyStore()
    }
}
