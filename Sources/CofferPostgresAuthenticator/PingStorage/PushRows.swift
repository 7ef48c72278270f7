import CofferPostgres
import CofferPush
import Foundation
import PostgresNIO

/// A row of `coffer_push_credentials`: the credential without its shared secret, and the sealed secret.
struct PushCredentialRow: Sendable {
    let credential: PushCredential
    let sealed: Data

    static let names = ["id", "user_id", "resource_id", "issuer", "display_issuer", "account_name", "display_account_name",
                        "server_endpoint", "shared_secret", "platform", "created_at", "image_url", "background_color", "policies",
                        "locking_policy", "is_locked"]
    static let select = "SELECT \(names.joined(separator: ", ")) FROM coffer_push_credentials "

    /// A row selected with ``select``; a column of the wrong type or value is a
    /// `PushStorageError` naming the column, never the value.
    init(_ row: PostgresRow) throws {
        var cursor = ColumnCursor(row, record: row.recordName("push credential", owner: "its owner"), columns: Self.names)
        do {
            let id: String = try cursor.next(), userId: String? = try cursor.next(), resourceId: String = try cursor.next()
            let issuer: String = try cursor.next(), displayIssuer: String = try cursor.next()
            let accountName: String = try cursor.next(), displayAccountName: String = try cursor.next()
            let endpoint: String = try cursor.next()
            sealed = try cursor.next()
            let platformName: String = try cursor.next()
            let created: Double = try cursor.next()
            guard let platform = PushPlatform(rawValue: platformName) else {
                throw PushStorageError.storageFailure("the row of push credential \(id) names a platform Coffer does not know", nil)
            }
            credential = PushCredential(
                id: id, userId: userId, resourceId: resourceId, issuer: issuer, displayIssuer: displayIssuer, accountName: accountName,
                displayAccountName: displayAccountName, serverEndpoint: endpoint, sharedSecret: "",
                createdAt: Date(timeIntervalSinceReferenceDate: created), imageURL: try cursor.next(), backgroundColor: try cursor.next(),
                policies: try cursor.next(), lockingPolicy: try cursor.next(), isLocked: try cursor.next(), platform: platform)
        } catch let error as PushStorageError {
            throw error
        } catch {
            throw PushStorageError.storageFailure("\(error)", nil)
        }
    }

    /// Stores `credential` with its sealed secret, replacing the owner's row with the same id.
    static func upsert(_ credential: PushCredential, sealed: Data, owner: String) throws -> PostgresQuery {
        try """
        INSERT INTO coffer_push_credentials (owner, id, user_id, resource_id, issuer, display_issuer, account_name,
            display_account_name, server_endpoint, shared_secret, platform, created_at, image_url, background_color, policies,
            locking_policy, is_locked)
        VALUES (\(owner), \(credential.id), \(credential.userId), \(credential.resourceId), \(credential.issuer),
            \(credential.displayIssuer), \(credential.accountName), \(credential.displayAccountName), \(credential.serverEndpoint),
            \(sealed), \(credential.platform.rawValue), \(credential.createdAt.timeIntervalSinceReferenceDate), \(credential.imageURL),
            \(credential.backgroundColor), \(credential.policies), \(credential.lockingPolicy), \(credential.isLocked))
        ON CONFLICT (owner, id) DO UPDATE SET user_id = excluded.user_id, resource_id = excluded.resource_id,
            issuer = excluded.issuer, display_issuer = excluded.display_issuer, account_name = excluded.account_name,
            display_account_name = excluded.display_account_name, server_endpoint = excluded.server_endpoint,
            shared_secret = excluded.shared_secret, platform = excluded.platform, created_at = excluded.created_at,
            image_url = excluded.image_url, background_color = excluded.background_color, policies = excluded.policies,
            locking_policy = excluded.locking_policy, is_locked = excluded.is_locked
        """
    }
}

/// A row of `coffer_push_notifications`: the notification without its challenge and cookie,
/// and those sealed.
struct PushNotificationRow: Sendable {
    let notification: PushNotification
    let challenge: Data?
    let cookie: Data?

    static let names = ["id", "credential_id", "message_id", "message_text", "custom_payload", "challenge", "numbers_challenge",
                        "amlb_cookie", "context_info", "push_type", "ttl", "pending", "approved", "created_at", "sent_at", "responded_at"]
    static let select = "SELECT \(names.joined(separator: ", ")) FROM coffer_push_notifications "

    /// A row selected with ``select``.
    init(_ row: PostgresRow) throws {
        var cursor = ColumnCursor(row, record: row.recordName("push notification", owner: "its owner"), columns: Self.names)
        do {
            let id: String = try cursor.next(), credentialId: String = try cursor.next(), messageId: String = try cursor.next()
            let messageText: String? = try cursor.next(), customPayload: String? = try cursor.next()
            challenge = try cursor.next()
            let numbersChallenge: String? = try cursor.next()
            cookie = try cursor.next()
            let contextInfo: String? = try cursor.next(), typeName: String = try cursor.next(), ttl: Int = try cursor.next()
            let pending: Bool = try cursor.next(), approved: Bool = try cursor.next(), created: Double = try cursor.next()
            let sent: Double? = try cursor.next(), responded: Double? = try cursor.next()
            guard let type = PushType(rawValue: typeName.lowercased()) else {
                throw PushStorageError.storageFailure("the row of push notification \(id) names a type Coffer does not know", nil)
            }
            notification = PushNotification(
                id: id, credentialId: credentialId, ttl: ttl, messageId: messageId, messageText: messageText, customPayload: customPayload,
                numbersChallenge: numbersChallenge, contextInfo: contextInfo, pushType: type,
                createdAt: Date(timeIntervalSinceReferenceDate: created), sentAt: sent.map(Date.init(timeIntervalSinceReferenceDate:)),
                respondedAt: responded.map(Date.init(timeIntervalSinceReferenceDate:)), approved: approved, pending: pending)
        } catch let error as PushStorageError {
            throw error
        } catch {
            throw PushStorageError.storageFailure("\(error)", nil)
        }
    }

    /// Stores `notification` with its sealed fields, replacing the owner's row with the same id.
    static func upsert(_ notification: PushNotification, challenge: Data?, cookie: Data?, owner: String) throws -> PostgresQuery {
        try """
        INSERT INTO coffer_push_notifications (owner, id, credential_id, message_id, message_text, custom_payload, challenge,
            numbers_challenge, amlb_cookie, context_info, push_type, ttl, pending, approved, created_at, sent_at, responded_at)
        VALUES (\(owner), \(notification.id), \(notification.credentialId), \(notification.messageId), \(notification.messageText),
            \(notification.customPayload), \(challenge), \(notification.numbersChallenge), \(cookie), \(notification.contextInfo),
            \(notification.pushType.rawValue), \(notification.ttl), \(notification.pending), \(notification.approved),
            \(notification.createdAt.timeIntervalSinceReferenceDate), \(notification.sentAt?.timeIntervalSinceReferenceDate),
            \(notification.respondedAt?.timeIntervalSinceReferenceDate))
        ON CONFLICT (owner, id) DO UPDATE SET credential_id = excluded.credential_id, message_id = excluded.message_id,
            message_text = excluded.message_text, custom_payload = excluded.custom_payload, challenge = excluded.challenge,
            numbers_challenge = excluded.numbers_challenge, amlb_cookie = excluded.amlb_cookie, context_info = excluded.context_info,
            push_type = excluded.push_type, ttl = excluded.ttl, pending = excluded.pending, approved = excluded.approved,
            created_at = excluded.created_at, sent_at = excluded.sent_at, responded_at = excluded.responded_at
        """
    }
}
