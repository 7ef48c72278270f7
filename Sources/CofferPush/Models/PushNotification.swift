import Foundation

/// A sign-in request a server pushed to this device, and the user's answer, the way Ping's Push
/// module keeps it. `description` and `dump` never show the challenge.
public struct PushNotification: Codable, Identifiable, Sendable, CustomStringConvertible, CustomReflectable {
    /// The notification's id (a UUID given on receipt).
    public let id: String
    /// The credential it is for (the server's mechanism id).
    public let credentialId: String
    /// Seconds it may be answered in, from ``createdAt``.
    public let ttl: Int
    /// The server's message id: a notification is stored once per message id.
    public let messageId: String
    /// Text to show.
    public let messageText: String?
    /// The server's custom payload.
    public let customPayload: String?
    /// The challenge the response is signed over.
    public let challenge: String?
    /// The numbers to choose from, `"12,34,56"`.
    public var numbersChallenge: String?
    /// The load balancer cookie (PingAM `amlbCookie`).
    public let loadBalancer: String?
    /// Where the sign-in comes from.
    public let contextInfo: String?
    /// What is asked.
    public let pushType: PushType
    /// When it was received.
    public let createdAt: Date
    /// When the server sent it.
    public let sentAt: Date?
    /// When the user answered.
    public var respondedAt: Date?
    private var extra: AdditionalData
    /// Whether it was approved.
    public var approved: Bool
    /// Whether it still waits for an answer.
    public var pending: Bool

    /// Data a handler attached; never stored.
    public var additionalData: [String: Any]? {
        get { extra.dictionary }
        set { extra = AdditionalData(newValue) }
    }

    /// ``pushType``'s raw value.
    public var type: String { pushType.rawValue }
    /// Approved, or no longer pending.
    public var responded: Bool { approved || !pending }
    /// More than ``ttl`` seconds have passed since ``createdAt``.
    public var isExpired: Bool { Date().timeIntervalSince(createdAt) > Double(ttl) }
    /// `PushNotification(id: …, type: …, approved: …, pending: …, expired: …)`.
    public var description: String {
        "PushNotification(id: \(id), type: \(type), approved: \(approved), pending: \(pending), expired: \(isExpired))"
    }

    /// Every stored property but the challenge and the load balancer cookie.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "id": id, "credentialId": credentialId, "ttl": ttl, "messageId": messageId, "messageText": messageText as Any,
            "pushType": pushType, "createdAt": createdAt, "sentAt": sentAt as Any, "respondedAt": respondedAt as Any,
            "approved": approved, "pending": pending,
        ], displayStyle: .struct)
    }

    /// A notification.
    public init(
        id: String = UUID().uuidString,
        credentialId: String,
        ttl: Int,
        messageId: String,
        messageText: String? = nil,
        customPayload: String? = nil,
        challenge: String? = nil,
        numbersChallenge: String? = nil,
        loadBalancer: String? = nil,
        contextInfo: String? = nil,
        pushType: PushType,
        createdAt: Date = Date(),
        sentAt: Date? = nil,
        respondedAt: Date? = nil,
        additionalData: [String: Any]? = nil,
        approved: Bool = false,
        pending: Bool = true
    ) {
        self.id = id
        self.credentialId = credentialId
        self.ttl = ttl
        self.messageId = messageId
        self.messageText = messageText
        self.customPayload = customPayload
        self.challenge = challenge
        self.numbersChallenge = numbersChallenge
        self.loadBalancer = loadBalancer
        self.contextInfo = contextInfo
        self.pushType = pushType
        self.createdAt = createdAt
        self.sentAt = sentAt
        self.respondedAt = respondedAt
        self.extra = AdditionalData(additionalData)
        self.approved = approved
        self.pending = pending
    }

    /// Approved now.
    public mutating func markApproved() {
        approved = true
        pending = false
        respondedAt = Date()
    }

    /// Denied now.
    public mutating func markDenied() {
        approved = false
        pending = false
        respondedAt = Date()
    }

    /// The numbers of ``numbersChallenge``: split on `,`, spaces trimmed, those that are whole numbers.
    public func getNumbersChallenge() -> [Int] {
        (numbersChallenge ?? "").split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    // MARK: - Codable: Ping's keys, additionalData never

    private enum CodingKeys: String, CodingKey {
        case id, credentialId, ttl, messageId, messageText, customPayload, challenge, numbersChallenge, loadBalancer
        case contextInfo, pushType, createdAt, sentAt, respondedAt, approved, pending
    }

    /// Reads Ping's JSON.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        credentialId = try container.decode(String.self, forKey: .credentialId)
        ttl = try container.decode(Int.self, forKey: .ttl)
        messageId = try container.decode(String.self, forKey: .messageId)
        messageText = try container.decodeIfPresent(String.self, forKey: .messageText)
        customPayload = try container.decodeIfPresent(String.self, forKey: .customPayload)
        challenge = try container.decodeIfPresent(String.self, forKey: .challenge)
        numbersChallenge = try container.decodeIfPresent(String.self, forKey: .numbersChallenge)
        loadBalancer = try container.decodeIfPresent(String.self, forKey: .loadBalancer)
        contextInfo = try container.decodeIfPresent(String.self, forKey: .contextInfo)
        pushType = try container.decode(PushType.self, forKey: .pushType)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        sentAt = try container.decodeIfPresent(Date.self, forKey: .sentAt)
        respondedAt = try container.decodeIfPresent(Date.self, forKey: .respondedAt)
        approved = try container.decode(Bool.self, forKey: .approved)
        pending = try container.decode(Bool.self, forKey: .pending)
        extra = AdditionalData(nil)
    }

    /// Writes Ping's JSON (absent optionals omitted).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(credentialId, forKey: .credentialId)
        try container.encode(ttl, forKey: .ttl)
        try container.encode(messageId, forKey: .messageId)
        try container.encodeIfPresent(messageText, forKey: .messageText)
        try container.encodeIfPresent(customPayload, forKey: .customPayload)
        try container.encodeIfPresent(challenge, forKey: .challenge)
        try container.encodeIfPresent(numbersChallenge, forKey: .numbersChallenge)
        try container.encodeIfPresent(loadBalancer, forKey: .loadBalancer)
        try container.encodeIfPresent(contextInfo, forKey: .contextInfo)
        try container.encode(pushType, forKey: .pushType)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(sentAt, forKey: .sentAt)
        try container.encodeIfPresent(respondedAt, forKey: .respondedAt)
        try container.encode(approved, forKey: .approved)
        try container.encode(pending, forKey: .pending)
    }
}

extension PushNotification {
    /// This notification with its sealed fields opened (what storages do after reading a row).
    package func withSealedFields(challenge: String?, loadBalancer: String?) -> PushNotification {
        PushNotification(
            id: id, credentialId: credentialId, ttl: ttl, messageId: messageId, messageText: messageText, customPayload: customPayload,
            challenge: challenge, numbersChallenge: numbersChallenge, loadBalancer: loadBalancer, contextInfo: contextInfo,
            pushType: pushType, createdAt: createdAt, sentAt: sentAt, respondedAt: respondedAt, approved: approved, pending: pending)
    }
}
