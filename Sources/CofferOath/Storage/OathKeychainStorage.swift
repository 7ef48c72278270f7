import CofferMFACommons
import CofferMFAEngine
import CofferStorage
import Foundation

/// ``OathStorage`` on the OS keyring (the freedesktop Secret Service), under Ping's service
/// name: every credential of the storage, secret included, in one sealed item, its *book*.
///
/// | item | `service` attribute | other attributes | holds |
/// | --- | --- | --- | --- |
/// | the credentials | `service` (`com.pingidentity.oath`) | `kind=credentials` | every credential with its secret, as JSON, sealed |
/// | HOTP counters | `service` + `.counters` | — | the counter memory (`HOTPCounterLedger`), sealed |
///
/// Both items also carry `accessGroup` (empty without one), and each value is sealed (AES-GCM,
/// a key kept in the keyring under `<service>.key`) and bound to its service and access group:
/// an item moved onto another storage's attributes is refused with
/// ``OathStorageError/storageCorrupted(_:)``.
///
/// Ping keeps two items per credential (the metadata in the clear, the secret apart); Coffer
/// keeps one book, because the Secret Service has no range queries: at 1,000 credentials a
/// listing reads one item instead of 2,000 (docs/performance.md, P9). Ping's items, which
/// Coffer 0.3 wrote, are moved into the book on first use (`CredentialBook`). Better than Ping:
/// - nothing is in the keyring in the clear, not even an issuer or an account name;
/// - every write, and the HOTP counter's read-increment-write, holds the keyring's lock
///   (`KeyringLock`, named after the service), so processes and shells of the user never
///   issue one code twice and a removal is never undone; every change is one item write,
///   which is atomic;
/// - credentials are listed oldest first, and a book that cannot be read fails the call
///   rather than reading as no credentials.
public final class OathKeychainStorage: OathCounterStorage {
    /// The `service` attribute of the book (and `<service>.counters`, `<service>.key`).
    public let service: String
    /// How items are protected.
    public let securityOptions: OathKeychainSecurityOptions
    let items: SealedKeyringItems
    private let logger: any CofferMFACommons.Logger
    private let book: CredentialBook

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
        let items = SealedKeyringItems(keyAlias: service + ".key", lockName: service, timeout: timeout)
        let logger = logger ?? LogManager.logger
        self.items = items
        self.logger = logger
        self.book = CredentialBook(service: service, accessGroup: securityOptions.accessGroup ?? "", items: items, logger: logger)
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
                         success: { _ in (.debug, "Successfully stored OATH credential with ID: \(id)") }) {
            try await run("store credential") {
                try await book.change { credentials in
                    if let index = credentials.firstIndex(where: { $0.id.isSameStoredID(as: credential.id) }) {
                        credentials[index] = credential
                    } else {
                        credentials.append(credential)
                    }
                }
            }
        }
    }

    public func retrieveOathCredential(credentialId: String) async throws -> OathCredential? {
        try await logger.logged("Retrieving OATH credential with ID: \(credentialId)", failure: "Failed to retrieve OATH credential with ID \(credentialId)",
                         success: { (.debug, $0 == nil ? "OATH credential with ID \(credentialId) not found" : "Successfully retrieved OATH credential with ID: \(credentialId)") }) {
            try await run("retrieve credential") { try await book.credentials().first { $0.id.isSameStoredID(as: credentialId) } }
        }
    }

    /// Every credential, oldest first. A book that cannot be read fails the call with
    /// ``OathStorageError/storageCorrupted(_:)`` (Ping skips an unreadable credential; here one
    /// unreadable item would hide them all).
    public func getAllOathCredentials() async throws -> [OathCredential] {
        try await logger.logged("Retrieving all OATH credentials", failure: "Failed to retrieve all OATH credentials",
                         success: { (.debug, "Successfully retrieved \($0.count) OATH credentials") }) {
            try await run("retrieve credentials") {
                try await book.credentials().sorted(by: OathCredential.oldestFirst)
            }
        }
    }

    public func removeOathCredential(credentialId: String) async throws -> Bool {
        try await logger.logged("Removing OATH credential with ID: \(credentialId)", failure: "Failed to remove OATH credential with ID \(credentialId)",
                         success: { (.debug, $0 ? "Successfully removed OATH credential with ID: \(credentialId)" : "OATH credential with ID \(credentialId) not found for removal") }) {
            try await run("remove credential") {
                try await book.change { credentials in
                    let before = credentials.count
                    credentials.removeAll { $0.id.isSameStoredID(as: credentialId) }
                    return credentials.count < before
                }
            }
        }
    }

    /// Removes every credential, including any the keyring holds that cannot be read.
    public func clearOathCredentials() async throws {
        try await logger.logged("Clearing all OATH credentials", failure: "Failed to clear all OATH credentials",
                         success: { _ in (.debug, "Successfully cleared all OATH credentials") }) {
            try await run("clear credentials") { try await items.exclusively { try await book.removeAll() } }
        }
    }

    /// Reads, changes and stores the credential under the keyring's lock.
    public func updateOathCredential(credentialId: String, _ change: @Sendable (OathCredential) throws -> OathCredential) async throws -> OathCredential? {
        try await run("store credential") {
            try await book.change { credentials in
                guard let index = credentials.firstIndex(where: { $0.id.isSameStoredID(as: credentialId) }) else { return nil }
                let credential = credentials[index]
                let next = try change(credential)
                try credential.requireSameCredential(next)
                credentials[index] = next
                return credential
            }
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
