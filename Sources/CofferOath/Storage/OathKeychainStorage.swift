import CofferMFACommons
import CofferMFAEngine
import CofferStorage
import Foundation

/// ``OathStorage`` on the OS keyring (the freedesktop Secret Service), in the layout of Ping's
/// `OathKeychainStorage`: per credential, a metadata item and a secret item apart.
///
/// | item | `service` attribute | `account` attribute | holds |
/// | --- | --- | --- | --- |
/// | metadata | `service` (`com.pingidentity.oath`) | the credential's id | its JSON, without the secret |
/// | secret | `service` + `.secrets` | the credential's id | the secret, sealed |
/// | HOTP counters | `service` + `.counters` | — | the counter memory (`HOTPCounterLedger`), sealed |
///
/// Both items also carry `accessGroup` (empty without one). Coffer does better than Ping:
/// - the secret is sealed (AES-GCM, a key kept in the keyring under `<service>.key`) and bound
///   to its credential, and the metadata's id must match its item: an item moved onto another
///   credential is refused with ``OathStorageError/storageCorrupted(_:)``;
/// - every write, and the HOTP counter's read-increment-write, holds the keyring's lock
///   (`KeyringLock`, named after the service), so processes and shells of the user never
///   issue one code twice and a removal is never undone;
/// - credentials are listed oldest first, and an unreadable one is logged, never dropped
///   silently.
public final class OathKeychainStorage: OathCounterStorage {
    /// The `service` attribute of the metadata items.
    public let service: String
    /// How items are protected.
    public let securityOptions: OathKeychainSecurityOptions
    let items: SealedKeyringItems
    private var keyring: SecretService { items.keyring }
    private let logger: any CofferMFACommons.Logger

    /// A storage under `service`, sealing with a key from the keyring. Nothing is checked until
    /// the first call: a keyring that cannot be used then gives ``OathStorageError/accessDenied(_:)``.
    public convenience init(
        service: String = "com.pingidentity.oath",
        logger: (any CofferMFACommons.Logger)? = nil,
        securityOptions: OathKeychainSecurityOptions = .standard
    ) {
        self.init(service: service, logger: logger, securityOptions: securityOptions, timeout: SecretService.defaultTimeout)
    }

    /// A storage whose keyring calls may each take up to `timeout` (Coffer's addition; the
    /// other initialisers allow 10 seconds), for keyrings that hold many items or answer slowly.
    public init(
        service: String = "com.pingidentity.oath",
        logger: (any CofferMFACommons.Logger)? = nil,
        securityOptions: OathKeychainSecurityOptions = .standard,
        timeout: Duration
    ) {
        self.service = service
        self.securityOptions = securityOptions
        self.items = SealedKeyringItems(keyAlias: service + ".key", lockName: service, timeout: timeout)
        self.logger = logger ?? LogManager.logger
    }

    /// A storage with the given access group and accessibility (no biometrics).
    public convenience init(
        service: String = "com.pingidentity.oath",
        logger: (any CofferMFACommons.Logger)? = nil,
        accessGroup: String? = nil,
        accessibility: CFString = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
    ) {
        self.init(service: service, logger: logger,
                  securityOptions: OathKeychainSecurityOptions(accessibility: accessibility, accessGroup: accessGroup))
    }

    public func storeOathCredential(_ credential: OathCredential) async throws {
        let id = credential.id
        try await logger.logged("Storing OATH credential with ID: \(id)", failure: "Failed to store OATH credential with ID \(id)",
                         success: { _ in (.debug, "Successfully stored OATH credential with ID: \(id)") }) { try await store(credential) }
    }

    private func store(_ credential: OathCredential) async throws {
        try await run("store credential") {
            let sealed = try await items.seal(credential.secret, boundTo: field(credential.id))
            try await items.exclusively {
                try await keyring.store(sealed, attributes: secretAttributes(credential.id),
                                        label: "OATH secret: \(credential.issuer)", contentType: "application/octet-stream")
                try await storeMetadata(credential)
            }
        }
    }

    public func retrieveOathCredential(credentialId: String) async throws -> OathCredential? {
        try await logger.logged("Retrieving OATH credential with ID: \(credentialId)", failure: "Failed to retrieve OATH credential with ID \(credentialId)",
                         success: { (.debug, $0 == nil ? "OATH credential with ID \(credentialId) not found" : "Successfully retrieved OATH credential with ID: \(credentialId)") }) {
            try await run("retrieve credential") { try await read(credentialId) }
        }
    }

    /// Every readable credential, oldest first; one that cannot be read is logged and skipped,
    /// as in Ping (``retrieveOathCredential(credentialId:)`` names its fault).
    public func getAllOathCredentials() async throws -> [OathCredential] {
        try await logger.logged("Retrieving all OATH credentials", failure: "Failed to retrieve all OATH credentials",
                         success: { (.debug, "Successfully retrieved \($0.count) OATH credentials") }) { try await allCredentials() }
    }

    private func allCredentials() async throws -> [OathCredential] {
        try await run("retrieve credentials") {
            let metadata = try await keyring.search(metadataAttributes(nil), loadLabels: false)
            let secrets = Dictionary(try await keyring.search(secretAttributes(nil), loadLabels: false).map { ($0.attributes["account"] ?? "", $0) },
                                     uniquingKeysWith: { first, _ in first })
            var credentials: [OathCredential] = []
            for item in metadata {
                let id = item.attributes["account"] ?? ""
                do {
                    credentials.append(try await open(item, secret: secrets[id], id: id))
                } catch {
                    logger.w("Skipped an OATH credential that cannot be read (\(id))", error: error)
                }
            }
            return credentials.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    public func removeOathCredential(credentialId: String) async throws -> Bool {
        try await logger.logged("Removing OATH credential with ID: \(credentialId)", failure: "Failed to remove OATH credential with ID \(credentialId)",
                         success: { (.debug, $0 ? "Successfully removed OATH credential with ID: \(credentialId)" : "OATH credential with ID \(credentialId) not found for removal") }) {
            try await remove(credentialId)
        }
    }

    private func remove(_ credentialId: String) async throws -> Bool {
        try await run("remove credential") {
            try await items.exclusively {
                let removed = try await keyring.clear(metadataAttributes(credentialId)) > 0
                try await keyring.clear(secretAttributes(credentialId))
                return removed
            }
        }
    }

    public func clearOathCredentials() async throws {
        try await logger.logged("Clearing all OATH credentials", failure: "Failed to clear all OATH credentials",
                         success: { _ in (.debug, "Successfully cleared all OATH credentials") }) { try await clear() }
    }

    private func clear() async throws {
        try await run("clear credentials") {
            try await items.exclusively {
                try await keyring.clear(metadataAttributes(nil))
                try await keyring.clear(secretAttributes(nil))
            }
        }
    }

    /// Reads, changes and stores the credential's metadata under the keyring's lock (the secret,
    /// which an update never changes, stays as it is).
    public func updateOathCredential(credentialId: String, _ change: @Sendable (OathCredential) throws -> OathCredential) async throws -> OathCredential? {
        try await run("store credential") {
            try await items.exclusively {
                guard let credential = try await read(credentialId) else { return nil }
                let next = try change(credential)
                try credential.requireSameCredential(next)
                try await storeMetadata(next)
                return credential
            }
        }
    }

    // MARK: - Items

    private func metadataAttributes(_ id: String?) -> [String: String] {
        var attributes = ["service": service, "accessGroup": securityOptions.accessGroup ?? ""]
        attributes["account"] = id
        return attributes
    }

    private func secretAttributes(_ id: String?) -> [String: String] {
        var attributes = ["service": service + ".secrets", "accessGroup": securityOptions.accessGroup ?? ""]
        attributes["account"] = id
        return attributes
    }

    /// Where a secret belongs: what its seal is bound to.
    private func field(_ id: String) -> String { "oath/\(service)/\(id)/secret" }

    private func storeMetadata(_ credential: OathCredential) async throws {
        try await keyring.store(try JSONEncoder().encode(credential), attributes: metadataAttributes(credential.id),
                                label: "OATH credential: \(credential.issuer)", contentType: "application/json")
    }

    private func read(_ id: String) async throws -> OathCredential? {
        guard let item = try await items.single(metadataAttributes(id)) else { return nil }
        guard let secret = try await items.single(secretAttributes(id)) else {
            throw OathStorageError.storageCorrupted("the credential \(id) has metadata but no secret")
        }
        return try await open(item, secret: secret, id: id)
    }

    /// The credential from its two items, each checked to belong to `id`.
    private func open(_ item: SecretService.Item, secret: SecretService.Item?, id: String) async throws -> OathCredential {
        guard !item.isLocked else { throw KeychainError.locked }
        guard let json = item.secret else { throw OathStorageError.storageCorrupted("the credential \(id) has no metadata") }
        let credential: OathCredential
        do { credential = try JSONDecoder().decode(OathCredential.self, from: json) } catch {
            throw OathStorageError.storageFailure("Failed to retrieve credential", error)
        }
        guard credential.id == id else { throw OathStorageError.storageCorrupted("the metadata of \(id) belongs to another credential") }
        guard let secret, let sealed = secret.secret else { throw OathStorageError.storageCorrupted("the credential \(id) has metadata but no secret") }
        do {
            return credential.withSecret(try await items.open(sealed, boundTo: field(id)))
        } catch is SealedKeyringItems.Misplaced {
            throw OathStorageError.storageCorrupted("the secret of \(id) does not belong to it")
        }
    }

    // MARK: - Locks and errors

    /// Runs `body`, refusing biometric options and mapping errors onto ``OathStorageError``.
    func run<R>(_ operation: String, _ body: () async throws -> R) async throws -> R {
        guard !securityOptions.requireBiometrics else {
            throw OathStorageError.accessDenied("biometric protection of keyring items is not available on Linux; use OathKeychainSecurityOptions.standard")
        }
        do {
            try KeychainAccessibility.check(securityOptions.accessibility)
        } catch {
            throw OathStorageError.accessDenied(error.errorDescription ?? "\(error)")
        }
        do {
            return try await body()
        } catch let error as OathStorageError {
            throw error
        } catch let error as OathError {
            throw error
        } catch let error as KeychainError {
            switch error {
            case .locked, .unavailable: throw OathStorageError.accessDenied("\(operation): \(error.description)")
            default: throw OathStorageError.storageFailure("Failed to \(operation)", error)
            }
        } catch {
            throw OathStorageError.storageFailure("Failed to \(operation)", error)
        }
    }
}
