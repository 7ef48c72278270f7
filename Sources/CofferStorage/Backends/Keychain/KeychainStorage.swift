import Foundation
import Logging

/// Keeps a value in the OS keyring: on Linux, the freedesktop Secret Service (gnome-keyring,
/// KeePassXC, KWallet's bridge), reached through libsecret.
///
/// The value is one item in the default collection, with the attributes `service` and
/// `account` and a label a person recognises in a keyring manager; `secret-tool search service
/// org.coffer.keychain` lists them. The item's secret is the value's JSON, or, with an encryptor
/// such as ``SecuredKeyEncryptor``, the JSON bound to the item (`service/account`) and sealed:
///
/// ```swift
/// let storage = KeychainStorage<Dog>(
///     account: "myStorageId",
///     encryptor: SecuredKeyEncryptor() ?? NoEncryptor()
/// )
/// ```
///
/// `get()` of a missing item returns `nil`; every other failure throws a ``KeychainError`` (a
/// locked keyring, no keyring, a call that timed out, two items that both match) or a
/// ``StorageError`` (an item that does not decrypt or decode). Nothing is ever prompted for.
public final class KeychainStorage<T: Codable & Sendable>: StorageDelegate<T>, @unchecked Sendable {
    // @unchecked Sendable: adds only immutable properties to StorageDelegate (which is safe).

    /// The default value of the `service` attribute.
    public static var defaultService: String { "org.coffer.keychain" }

    /// The `account` attribute: which storage this is.
    public let account: String
    /// The `service` attribute: which application the items belong to.
    public let service: String
    /// The encryptor that seals the item's secret.
    public let encryptor: any Encryptor

    /// Creates a keyring storage, as the spec does.
    ///
    /// - Parameters:
    ///   - account: A string that identifies this storage among the application's items.
    ///   - encryptor: Seals the secret before it reaches the keyring. Defaults to ``NoEncryptor``.
    ///   - cacheable: Keep a (plaintext) memory copy: ``CacheStrategy/cache``.
    public init(account: String, encryptor: any Encryptor = NoEncryptor(), cacheable: Bool = false) {
        self.account = account
        self.service = Self.defaultService
        self.encryptor = encryptor
        super.init(
            delegate: KeychainItem<T>(
                secretService: SecretService(), service: Self.defaultService, account: account, encryptor: encryptor),
            cacheable: cacheable)
    }

    /// Creates a keyring storage with every setting. `cacheStrategy` is required here so that
    /// `KeychainStorage(account:)` always means the spec's initializer.
    ///
    /// - Parameters:
    ///   - account: A string that identifies this storage among the application's items.
    ///   - service: The `service` attribute. Defaults to `org.coffer.keychain`.
    ///   - encryptor: Seals the secret before it reaches the keyring.
    ///   - cacheStrategy: How to keep a memory copy.
    ///   - timeout: How long one keyring call may take before ``KeychainError/timedOut``.
    ///   - logger: Receives warnings about absorbed failures.
    public init(
        account: String,
        service: String = KeychainStorage.defaultService,
        encryptor: any Encryptor = NoEncryptor(),
        cacheStrategy: CacheStrategy,
        timeout: Duration = SecretService.defaultTimeout,
        logger: Logger = Logger(label: "org.coffer.storage.keychain")
    ) {
        self.account = account
        self.service = service
        self.encryptor = encryptor
        super.init(
            delegate: KeychainItem<T>(
                secretService: SecretService(timeout: timeout), service: service, account: account, encryptor: encryptor),
            cacheStrategy: cacheStrategy,
            logger: logger)
    }
}

/// The storage behind ``KeychainStorage``: one Secret Service item.
struct KeychainItem<T: Codable & Sendable>: Storage {
    let secretService: SecretService
    let service: String
    let account: String
    let sealing: ItemSealing

    init(secretService: SecretService, service: String, account: String, encryptor: any Encryptor) {
        self.secretService = secretService
        self.service = service
        self.account = account
        self.sealing = ItemSealing(encryptor)
    }

    var attributes: [String: String] { ["service": service, "account": account] }
    var identity: String { "\(service)/\(account)" }
    var location: String { "keyring item (service \(service), account \(account))" }
    var label: String { "\(account) (Coffer, \(service))" }

    func save(item: T) async throws {
        try checkNames()
        let secret = try await sealing.seal(item, identity: identity, sealedUnder: { _ in
            SealedValue(try await secretService.search(attributes, loadAttributes: false, loadLabels: false).first?.secret,
                        at: location)
        })
        let contentType = if case .plain = sealing { "application/json" } else { "application/octet-stream" }
        try await secretService.store(secret, attributes: attributes, label: label, contentType: contentType)
    }

    func get() async throws -> T? {
        try checkNames()
        let items = try await secretService.search(attributes, loadAttributes: false, loadLabels: false)
        guard let item = items.first else {
            // "Nothing stored" only from a keyring that could have stored it: with no default
            // collection yet a save fails, so a read says so too (an app would take `nil` for
            // "signed out" where the keyring is broken).
            _ = try await secretService.defaultCollectionState()
            return nil
        }
        guard items.count == 1 else { throw KeychainError.ambiguous(attributes: attributes, count: items.count) }
        guard !item.isLocked else { throw KeychainError.locked }
        guard let secret = item.secret else {
            throw StorageError.corrupted(location: location, reason: "the keyring returned the item without its secret")
        }
        return try await sealing.open(secret, as: T.self, identity: identity, location: location)
    }

    func delete() async throws {
        try checkNames()
        try await secretService.clear(attributes)
    }

    private func checkNames() throws(StorageError) {
        if account.isEmpty { throw .invalidName(account, reason: "a keyring account cannot be empty") }
        if service.isEmpty { throw .invalidName(service, reason: "a keyring service cannot be empty") }
    }
}

extension KeychainItem: ExclusiveSection {
    /// The keyring's lock named after this item's service and account, which every process of
    /// this user reaching the same keyring takes.
    func withExclusiveSection<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws -> R {
        let held = try await KeyringLock.named("section.\(service).\(account)").exclusive()
        defer { held.release() }
        return try await body()
    }
}
