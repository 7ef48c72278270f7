import CofferMFACommons
import CofferMFATransfer
import CofferStorage
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
    private let logger: any CofferMFACommons.Logger

    private init(service: OathService, logger: any CofferMFACommons.Logger) {
        self.service = service
        self.logger = logger
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
        let client = OathClient(service: OathService(storage: storage, evaluator: evaluator, logger: logger,
                                                     cacheEnabled: configuration.enableCredentialCache), logger: logger)
        logger.d("OATH client initialized successfully")
        return client
    }

    /// Parses `uri`, checks its policies (a failing one refuses it and stores nothing) and
    /// stores the credential.
    public func addCredentialFromUri(_ uri: String) async throws -> OathCredential {
        try await logger.logged("Adding credential from URI", failure: "Failed to add credential from URI",
                         success: { (.info, "Successfully added credential: \($0.issuer)") }) { try await service.add(uri: uri) }
    }

    /// Validates `credential`, applies its policies' lock state, and stores it (an update when
    /// its id exists).
    public func saveCredential(_ credential: OathCredential) async throws -> OathCredential {
        try await logger.logged("Saving credential: \(credential.id)", failure: "Failed to save credential \(credential.id)",
                         success: { (.info, "Successfully saved credential: \($0.id)") }) { try await service.save(credential) }
    }

    /// Every credential, read from storage, each with the lock state its policies give it now.
    public func getCredentials() async throws -> [OathCredential] {
        try await logger.logged("Retrieving all credentials", failure: "Failed to retrieve credentials",
                         success: { (.debug, "Retrieved \($0.count) credentials") }) { try await service.credentials() }
    }

    /// The credential with this id (from the cache when it is on), or `nil`.
    public func getCredential(_ credentialId: String) async throws -> OathCredential? {
        try await logger.logged("Retrieving credential: \(credentialId)", failure: "Failed to retrieve credential \(credentialId)",
                         success: { (.debug, $0 == nil ? "Credential not found: \(credentialId)" : "Found credential: \(credentialId)") }) {
            try await service.credential(credentialId)
        }
    }

    /// Removes the credential; `false` when there was none.
    public func deleteCredential(_ credentialId: String) async throws -> Bool {
        try await logger.logged("Deleting credential: \(credentialId)", failure: "Failed to delete credential \(credentialId)",
                         success: { $0 ? (.info, "Successfully deleted credential: \(credentialId)") : (.debug, "Credential not found for deletion: \(credentialId)") }) {
            try await service.delete(credentialId)
        }
    }

    /// The credential's current code (TOTP) or next code (HOTP, its counter stored first).
    public func generateCode(_ credentialId: String) async throws -> String {
        try await logger.logged("Generating code for credential: \(credentialId)", failure: "Failed to generate code for credential \(credentialId)",
                         success: { _ in (.debug, "Successfully generated code for credential: \(credentialId)") }) {
            try await service.code(credentialId).code
        }
    }

    /// The code with its time left (TOTP) or the counter after it (HOTP).
    public func generateCodeWithValidity(_ credentialId: String) async throws -> OathCodeInfo {
        try await logger.logged("Generating code with validity for credential: \(credentialId)",
                         failure: "Failed to generate code with validity for credential \(credentialId)",
                         success: { _ in (.debug, "Successfully generated code with validity for credential: \(credentialId)") }) {
            try await service.code(credentialId)
        }
    }

    /// Imports accounts read from another authenticator's export (CofferMFATransfer's
    /// `ImportFormat` reads Aegis, Google, 2FAS, andOTP, FreeOTP+, Bitwarden, Ente and URI lists).
    ///
    /// Each entry is checked as a scanned URI is, by Ping's rules, then its policies and the
    /// storage's rules, and reported: imported; skipped, when a credential with its issuer,
    /// account and type exists (`overwrite` replaces it, keeping its id; a replaced HOTP
    /// counter is remembered, so codes never repeat); unsupported (Steam, mOTP, Yandex, push);
    /// or refused, with why. Read the whole file before calling, so a file that cannot be read
    /// imports nothing.
    public func importEntries(_ entries: [ImportEntry], overwrite: Bool = false) async throws -> OathImportReport {
        try await service.importEntries(entries, overwrite: overwrite)
    }

    /// Every credential as an exported account (CofferMFATransfer's `AccountExport` writes them
    /// as an Aegis vault, URIs, QR codes or Google transfer codes), and the titles of those left
    /// out with why: a credential a policy locked is not exported, since its codes are not to
    /// be made anywhere.
    public func exportAccounts() async throws -> (accounts: [TransferAccount], notExported: [String]) {
        try await service.exportAccounts()
    }

    /// Empties the credential cache; the client stays usable.
    public func close() async throws {
        logger.d("Closing OATH client")
        await service.close()
        logger.i("OATH client closed successfully")
    }
}
