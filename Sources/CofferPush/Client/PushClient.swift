import CofferMFACommons
import Foundation

/// Adds push credentials from enrolment URIs, keeps them with their notifications and the
/// device token in a ``PushStorage``, and answers notifications, as Ping's Push module does.
///
/// What talks to a server (registration, approve, deny, a new device token) goes through a
/// ``PushHandler``; on Linux the app provides the network step (``PingAMNetwork``). Everything
/// that is storage works here as in Ping, and better where Ping has a defect: deleting a
/// credential deletes its notifications, a message is stored once however many times it
/// arrives, and the credential list is always complete.
public final class PushClient: Sendable {
    private let service: PushService
    private let logger: any CofferMFACommons.Logger
    private var handlers: [String: any PushHandler] { service.handlers }

    private init(service: PushService, logger: any CofferMFACommons.Logger) {
        self.service = service
        self.logger = logger
    }

    /// A client with the settings `configure` makes. Without a storage, a
    /// ``PushKeychainStorage`` with its defaults, written back into the configuration.
    public static func createClient(configure: (PushConfiguration) -> Void = { _ in }) async throws -> PushClient {
        try await createClient(configuration: PushConfiguration.build(configure))
    }

    /// A client with `configuration`'s settings.
    public static func createClient(configuration: PushConfiguration) async throws -> PushClient {
        let logger = configuration.logger
        let storage = configuration.storage ?? PushKeychainStorage(logger: logger)
        configuration.storage = storage
        for key in configuration.ignoredHandlerKeys { logger.w("customPushHandlers[\(key)] is not a PushHandler; it is ignored", error: nil) }
        let evaluator = configuration.policyEvaluator ?? MfaPolicyEvaluator.standard(logger: logger)
        let service = PushService(configuration: configuration, storage: storage, evaluator: evaluator)
        return PushClient(service: service, logger: logger)
    }

    /// Parses `uri`, checks its policies, registers the credential with its server (a device
    /// token must be set) and stores it.
    public func addCredentialFromUri(_ uri: String) async throws -> PushCredential {
        try await service.add(uri: uri)
    }

    /// Applies `credential`'s policies' lock state and stores it (an update when its id exists).
    public func saveCredential(_ credential: PushCredential) async throws -> PushCredential {
        try await service.save(credential)
    }

    /// Every credential, read from storage, each with the lock state its policies give it now.
    public func getCredentials() async throws -> [PushCredential] {
        try await service.credentials()
    }

    /// The credential with this id (from the cache when it is on), or `nil`.
    public func getCredential(credentialId: String) async throws -> PushCredential? {
        try await service.credential(credentialId)
    }

    /// Removes the credential and its notifications; `false` when there was no credential.
    public func deleteCredential(credentialId: String) async throws -> Bool {
        try await service.delete(credentialId)
    }

    /// Stores `deviceToken` as the current one and sends it to the servers of one credential or
    /// all; the same token again does nothing and answers `true`.
    public func setDeviceToken(_ deviceToken: String, credentialId: String? = nil) async throws -> Bool {
        try await service.setDeviceToken(deviceToken, credentialId: credentialId)
    }

    /// The current device token.
    public func getDeviceToken() async throws -> String? {
        try await service.deviceToken()
    }

    /// Reads a notification payload with the first handler that takes it and stores it; `nil`
    /// when no handler does. A message already stored is returned, not stored again.
    public func processNotification(messageData: [String: Any]) async throws -> PushNotification? {
        try await service.checkOpen()
        guard let handler = handlers.values.first(where: { $0.canHandle(messageData: messageData) }) else { return nil }
        let message: IncomingMessage
        do { message = try IncomingMessage(handler.parseMessage(messageData: messageData)) } catch let error as PushError { throw error } catch {
            throw PushError.messageParsingFailed(error.localizedDescription)
        }
        return try await received(message)
    }

    /// Reads a bare message (a JWT); its message id is the first 8 characters of its signature.
    public func processNotification(message: String) async throws -> PushNotification? {
        try await service.checkOpen()
        guard let handler = handlers.values.first(where: { $0.canHandle(message: message) }) else { return nil }
        var fields: [String: Any]
        do { fields = try handler.parseMessage(message: message) } catch let error as PushError { throw error } catch {
            throw PushError.messageParsingFailed(error.localizedDescription)
        }
        if fields["messageId"] == nil, let signature = message.split(separator: ".").last { fields["messageId"] = String(signature.prefix(8)) }
        return try await received(try IncomingMessage(fields))
    }

    /// Reads an APNs-style payload: `aps.data` is the message, `aps.messageId` its id.
    public func processNotification(userInfo: [AnyHashable: Any]) async throws -> PushNotification? {
        var data: [String: Any] = [:]
        for (key, value) in userInfo { if let key = key as? String { data[key] = value } }
        if let aps = data["aps"] as? [String: Any] {
            if let message = aps["data"] { data["message"] = message }
            if let messageId = aps["messageId"] { data["messageId"] = messageId }
        }
        return try await processNotification(messageData: data)
    }

    /// Approves the notification through its credential's handler; `false` when it was already
    /// answered or the server refused.
    public func approveNotification(_ notificationId: String) async throws -> Bool {
        try await service.respond(notificationId, approve: true, params: [:])
    }

    /// Approves a challenge notification with the number the user chose.
    public func approveChallengeNotification(_ notificationId: String, challengeResponse: String) async throws -> Bool {
        guard !challengeResponse.trimmingCharacters(in: .whitespaces).isEmpty else { throw PushError.invalidParameterValue("the challenge response is empty") }
        return try await service.respond(notificationId, approve: true, params: ["challengeResponse": challengeResponse])
    }

    /// Approves a biometric notification, naming how the user authenticated.
    public func approveBiometricNotification(_ notificationId: String, authenticationMethod: String) async throws -> Bool {
        guard !authenticationMethod.trimmingCharacters(in: .whitespaces).isEmpty else { throw PushError.invalidParameterValue("the authentication method is empty") }
        return try await service.respond(notificationId, approve: true, params: ["authenticationMethod": authenticationMethod])
    }

    /// Denies the notification through its credential's handler.
    public func denyNotification(_ notificationId: String) async throws -> Bool {
        try await service.respond(notificationId, approve: false, params: [:])
    }

    /// The notifications still pending and not expired, newest first.
    public func getPendingNotifications() async throws -> [PushNotification] {
        try await service.notifications(pendingOnly: true)
    }

    /// Every notification, newest first.
    public func getAllNotifications() async throws -> [PushNotification] {
        try await service.notifications(pendingOnly: false)
    }

    /// The notification with this id, or `nil`.
    public func getNotification(notificationId: String) async throws -> PushNotification? {
        try await service.notification(notificationId)
    }

    /// Runs the configured cleanup for one credential or (`nil`) all; returns how many went.
    public func cleanupNotifications(credentialId: String? = nil) async throws -> Int {
        try await service.checkOpen()
        return try await service.runCleanup(credentialId: credentialId)
    }

    /// Empties the cache, runs the cleanup for all, and closes the client (later calls throw
    /// ``PushError/notInitialized``). A second call does nothing.
    public func close() async {
        await service.close()
    }

    private func received(_ message: IncomingMessage) async throws -> PushNotification {
        let notification = try await service.receive(message)
        if service.cleanup.cleanupMode != .none {
            let service = service, logger = logger, credentialId = notification.credentialId
            Task.detached {
                do { _ = try await service.runCleanup(credentialId: credentialId) } catch {
                    logger.w("Cleanup after a notification failed", error: error)
                }
            }
        }
        return notification
    }
}
