import CofferMFACommons
import Foundation

/// What ``PushClient`` does, in one actor: credentials (with the optional cache and policy
/// lock state), notifications, the device token and cleanup.
///
/// Better than Ping's: the credential list always comes from storage (Ping's cache can return
/// an incomplete one); deleting a credential deletes its notifications; a notification is
/// stored once per message id even when two arrive at once (the check and the store are one
/// step of this actor); URI errors stay URI errors (Ping reports them as network failures).
actor PushService {
    let storage: any PushStorage
    private let evaluator: MfaPolicyEvaluator
    private let logger: any CofferMFACommons.Logger
    private let cacheEnabled: Bool
    let handlers: [String: any PushHandler]
    let cleanup: NotificationCleanupConfig
    private var cache: [String: PushCredential] = [:]
    private(set) var isOpen = true

    init(configuration: PushConfiguration, storage: any PushStorage, evaluator: MfaPolicyEvaluator) {
        self.storage = storage
        self.evaluator = evaluator
        self.logger = configuration.logger
        self.cacheEnabled = configuration.enableCredentialCache
        self.handlers = ["pingam": PingAMPushHandler()].merging(configuration.handlers) { $1 }
        self.cleanup = configuration.notificationCleanupConfig
    }

    func checkOpen() throws {
        guard isOpen else { throw PushError.notInitialized }
    }

    // MARK: - Credentials

    func add(uri: String) async throws -> PushCredential {
        try checkOpen()
        let credential = try await PushUriParser.parse(uri)
        let result = await evaluator.evaluate(credentialPolicies: credential.policies)
        if result.isFailure { throw PushError.policyViolation("the credential violates the policy '\(result.nonCompliancePolicyName ?? "unknown")'") }
        guard let token = try await storing("retrieve device token", { try await storage.getCurrentPushDeviceToken() }) else {
            throw PushError.deviceTokenNotSet
        }
        var params: [String: String] = try await PushUriParser.registrationParameters(uri)
        params["deviceId"] = token.token
        params["deviceName"] = ProcessInfo.processInfo.hostName
        let handler = try handler(for: credential)
        guard try await handler.register(credential: credential, params: params) else {
            throw PushError.registrationFailed("the server refused the registration of \(credential.id)")
        }
        return try await save(credential)
    }

    func save(_ credential: PushCredential) async throws -> PushCredential {
        try checkOpen()
        let checked = await applyingPolicies(credential)
        try await storing("store push credential") { try await storage.storePushCredential(checked) }
        remember(checked)
        return checked
    }

    func credentials() async throws -> [PushCredential] {
        try checkOpen()
        var result: [PushCredential] = []
        for credential in try await storing("retrieve push credentials", { try await storage.getAllPushCredentials() }) {
            result.append(try await checked(credential))
        }
        return result
    }

    func credential(_ id: String) async throws -> PushCredential? {
        try checkOpen()
        if cacheEnabled, let cached = cache[id] { return cached }
        guard let credential = try await storing("retrieve push credential", { try await storage.retrievePushCredential(credentialId: id) }) else {
            return nil
        }
        return try await checked(credential)
    }

    func delete(_ id: String) async throws -> Bool {
        try checkOpen()
        cache[id] = nil
        return try await storing("remove push credential") {
            let removed = try await storage.removePushCredential(credentialId: id)
            // Coffer's storages remove the notifications with the credential; an app's own may not.
            _ = try await storage.removePushNotificationsForCredential(credentialId: id)
            return removed
        }
    }

    // MARK: - Device token

    func setDeviceToken(_ raw: String, credentialId: String?) async throws -> Bool {
        try checkOpen()
        let token = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw PushError.invalidParameterValue("the device token is empty") }
        if try await storing("retrieve device token", { try await storage.getCurrentPushDeviceToken() })?.token == token { return true }
        try await storing("store device token") { try await storage.storePushDeviceToken(PushDeviceToken(token: token)) }
        let targets: [PushCredential]
        if let credentialId {
            guard let credential = try await storing("retrieve push credential", { try await storage.retrievePushCredential(credentialId: credentialId) }) else {
                return false
            }
            targets = [credential]
        } else {
            targets = try await storing("retrieve push credentials") { try await storage.getAllPushCredentials() }
        }
        var allSent = true
        for credential in targets {
            guard let handler = handlers[credential.platform.rawValue] else { continue }
            do {
                let params: [String: String] = [:]
                if try await !handler.setDeviceToken(credential: credential, deviceToken: token, params: params) { allSent = false }
            } catch {
                logger.w("The server of \(credential.id) did not take the new device token", error: error)
                allSent = false
            }
        }
        return allSent
    }

    func deviceToken() async throws -> String? {
        try checkOpen()
        return try await storing("retrieve device token") { try await storage.getCurrentPushDeviceToken()?.token }
    }

    // MARK: - Notifications

    /// Stores the message as a new pending notification, or returns the one already stored for
    /// its message id.
    func receive(_ message: IncomingMessage) async throws -> PushNotification {
        try checkOpen()
        if !message.messageId.isEmpty,
           let existing = try await storing("retrieve notification", { try await storage.getNotificationByMessageId(messageId: message.messageId) }) {
            return existing
        }
        if let userId = message.userId, !userId.isEmpty,
           let credential = try? await storage.retrievePushCredential(credentialId: message.credentialId),
           (credential.userId ?? "").isEmpty {
            let updated = credential.replacing(userId: userId)
            do { try await storage.storePushCredential(updated); remember(updated) } catch {
                logger.w("Could not record the user id of \(credential.id)", error: error)
            }
        }
        let notification = message.notification()
        try await storing("store notification") { try await storage.storePushNotification(notification) }
        return notification
    }

    func respond(_ notificationId: String, approve: Bool, params: [String: String]) async throws -> Bool {
        try checkOpen()
        guard var notification = try await storing("retrieve notification", { try await storage.retrievePushNotification(notificationId: notificationId) }) else {
            throw PushError.notificationNotFound(notificationId)
        }
        guard notification.pending else { return false }
        guard let credential = try await credential(notification.credentialId) else { throw PushError.credentialNotFound(notification.credentialId) }
        guard !credential.isLocked else { throw PushError.credentialLocked(credential.id) }
        let handler = try handler(for: credential)
        let sent = approve
            ? try await handler.sendApproval(credential: credential, notification: notification, params: params)
            : try await handler.sendDenial(credential: credential, notification: notification, params: params)
        guard sent else { return false }
        if approve { notification.markApproved() } else { notification.markDenied() }
        let answered = notification
        try await storing("update notification") { try await storage.updatePushNotification(answered) }
        return true
    }

    func notifications(pendingOnly: Bool) async throws -> [PushNotification] {
        try checkOpen()
        return try await storing("retrieve notifications") {
            pendingOnly ? try await storage.getPendingPushNotifications() : try await storage.getAllPushNotifications()
        }
    }

    func notification(_ id: String) async throws -> PushNotification? {
        try checkOpen()
        return try await storing("retrieve notification") { try await storage.retrievePushNotification(notificationId: id) }
    }

    /// Runs the configured cleanup, for one credential or (`nil`) all.
    func runCleanup(credentialId: String?) async throws -> Int {
        switch cleanup.cleanupMode {
        case .none: return 0
        case .countBased: return try await purgeByCount(credentialId)
        case .ageBased: return try await purgeByAge(credentialId)
        case .hybrid: return try await purgeByCount(credentialId) + purgeByAge(credentialId)
        }
    }

    func close() async {
        guard isOpen else { return }
        cache.removeAll()
        do { _ = try await runCleanup(credentialId: nil) } catch { logger.w("Cleanup on close failed", error: error) }
        isOpen = false
    }

    // MARK: - Helpers

    private func purgeByCount(_ credentialId: String?) async throws -> Int {
        do { return try await storage.purgePushNotificationsByCount(maxCount: cleanup.maxStoredNotifications, credentialId: credentialId) } catch {
            throw PushError.storageFailure("Failed to purge notifications by count", error)
        }
    }

    private func purgeByAge(_ credentialId: String?) async throws -> Int {
        do { return try await storage.purgePushNotificationsByAge(maxAgeDays: cleanup.maxNotificationAgeDays, credentialId: credentialId) } catch {
            throw PushError.storageFailure("Failed to purge notifications by age", error)
        }
    }

    private func handler(for credential: PushCredential) throws -> any PushHandler {
        guard let handler = handlers[credential.platform.rawValue] else { throw PushError.noHandlerForPlatform(credential.platform.rawValue) }
        return handler
    }

    /// Applies the credential's policies, persisting a change of its lock state, and caches it.
    private func checked(_ credential: PushCredential) async throws -> PushCredential {
        let result = await applyingPolicies(credential)
        if result.isLocked != credential.isLocked || result.lockingPolicy != credential.lockingPolicy {
            try await storing("store push credential") { try await storage.storePushCredential(result) }
        }
        remember(result)
        return result
    }

    private func applyingPolicies(_ credential: PushCredential) async -> PushCredential {
        guard let state = await evaluator.lockState(policies: credential.policies, isLocked: credential.isLocked,
                                                    lockingPolicy: credential.lockingPolicy) else { return credential }
        var changed = credential
        if state.isLocked { changed.lockCredential(policyName: state.lockingPolicy ?? "unknown") } else { changed.unlockCredential() }
        return changed
    }

    private func remember(_ credential: PushCredential) {
        if cacheEnabled { cache[credential.id] = credential }
    }

    /// Runs a storage step; anything but a ``PushError`` becomes ``PushError/storageFailure(_:_:)``.
    private func storing<R>(_ operation: String, _ body: () async throws -> R) async throws -> R {
        do { return try await body() } catch let error as PushError { throw error } catch {
            throw PushError.storageFailure("Failed to \(operation)", error)
        }
    }
}
