import CofferMFACommons
import Foundation

/// Adds OATH credentials from enrolment URIs, keeps them in an ``OathStorage``, and makes their
/// codes, as Ping's Oath module does:
///
/// ```swift
/// let client = try await OathClient.createClient { config in
///     config.storage = MemoryOathStorage()
///     config.enableCredentialCache = false
/// }
/// let credential = try await client.addCredentialFromUri(
///     "otpauth://hotp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example")
/// let code = try await client.generateCode(credential.id)  // "755224"; the counter is stored first
/// ```
///
/// A HOTP counter is stored before its code is returned; two requests never get the same code,
/// from two tasks or (with Coffer's storages) two processes.
public final class OathClient: Sendable {
    private let service: OathService

    private init(service: OathService) {
        self.service = service
    }

    /// A client with the settings `configure` makes. Without a storage, an
    /// ``OathKeychainStorage`` with its defaults, written back into the configuration.
    public static func createClient(configure: (OathConfiguration) -> Void = { _ in }) async throws -> OathClient {
        try await createClient(configuration: OathConfiguration.build(configure))
    }

    /// A client with `configuration`'s settings (Coffer's addition, as Ping's Push client has).
    public static func createClient(configuration: OathConfiguration) async throws -> OathClient {
        let storage = configuration.storage ?? OathKeychainStorage()
        configuration.storage = storage
        let logger = configuration.logger
        let evaluator = configuration.policyEvaluator ?? MfaPolicyEvaluator.standard(logger: logger)
        return OathClient(service: OathService(storage: storage, evaluator: evaluator, logger: logger,
                                               cacheEnabled: configuration.enableCredentialCache))
    }

    /// Parses `uri`, checks its policies (a failing one refuses it and stores nothing) and
    /// stores the credential.
    public func addCredentialFromUri(_ uri: String) async throws -> OathCredential {
        try await service.add(uri: uri)
    }

    /// Validates `credential`, applies its policies' lock state, and stores it (an update when
    /// its id exists).
    public func saveCredential(_ credential: OathCredential) async throws -> OathCredential {
        try await service.save(credential)
    }

    /// Every credential, read from storage, each with the lock state its policies give it now.
    public func getCredentials() async throws -> [OathCredential] {
        try await service.credentials()
    }

    /// The credential with this id (from the cache when it is on), or `nil`.
    public func getCredential(_ credentialId: String) async throws -> OathCredential? {
        try await service.credential(credentialId)
    }

    /// Removes the credential; `false` when there was none.
    public func deleteCredential(_ credentialId: String) async throws -> Bool {
        try await service.delete(credentialId)
    }

    /// The credential's current code (TOTP) or next code (HOTP, its counter stored first).
    public func generateCode(_ credentialId: String) async throws -> String {
        try await service.code(credentialId).code
    }

    /// The code with its time left (TOTP) or the counter after it (HOTP).
    public func generateCodeWithValidity(_ credentialId: String) async throws -> OathCodeInfo {
        try await service.code(credentialId)
    }

    /// Empties the credential cache; the client stays usable.
    public func close() async throws {
        await service.close()
    }
}
