import Foundation

/// A notification's fields as a handler read them, in a form that can cross into the client's
/// actor (a handler's `[String: Any]` cannot).
struct IncomingMessage: Sendable {
    var credentialId: String
    var messageId: String
    var ttl: Int
    var messageText: String?
    var customPayload: String?
    var challenge: String?
    var numbersChallenge: String?
    var loadBalancer: String?
    var contextInfo: String?
    var pushType: PushType
    var sentAt: Date?
    var userId: String?

    /// The fields of `parsed`; an unknown type reads as `default`, as in Ping.
    init(_ parsed: [String: Any]) throws {
        guard let credentialId = parsed["credentialId"] as? String, !credentialId.isEmpty else {
            throw PushError.messageParsingFailed("the message names no credential")
        }
        self.credentialId = credentialId
        messageId = (parsed["messageId"] as? String ?? "").trimmingCharacters(in: .whitespaces)
        ttl = parsed["ttl"] as? Int ?? 120
        messageText = parsed["messageText"] as? String
        customPayload = parsed["customPayload"] as? String
        challenge = parsed["challenge"] as? String
        numbersChallenge = parsed["numbersChallenge"] as? String
        loadBalancer = parsed["loadBalancer"] as? String
        contextInfo = parsed["contextInfo"] as? String
        pushType = (parsed["pushType"] as? String).flatMap { try? PushType.fromString($0) } ?? .default
        sentAt = parsed["sentAt"] as? Date
        userId = parsed["userId"] as? String
    }

    /// A new pending notification received now.
    func notification() -> PushNotification {
        PushNotification(
            credentialId: credentialId, ttl: ttl, messageId: messageId, messageText: messageText, customPayload: customPayload,
            challenge: challenge, numbersChallenge: numbersChallenge, loadBalancer: loadBalancer, contextInfo: contextInfo,
            pushType: pushType, sentAt: sentAt)
    }
}
