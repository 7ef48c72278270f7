import Foundation

/// A push authentication request received for a push ``Mechanism``.
///
/// Its identity is ``messageId`` within its mechanism (``mechanismUUID``). `description`,
/// `debugDescription` and its mirror (`dump`, the debugger) never show the challenge.
public struct PushNotification: Codable, Sendable, Hashable {
    /// The server's id for this request.
    public var messageId: String
    /// The push mechanism it is for.
    public var mechanismUUID: String
    /// The challenge to answer (base64).
    public var challenge: String
    /// Seconds the request stays valid after ``timeAdded``.
    public var ttl: Int
    /// When the request arrived.
    public var timeAdded: Date
    /// Whether the user has not answered yet.
    public var pending: Bool
    /// Whether the user approved it.
    public var approved: Bool
    /// The load-balancer cookie to send back.
    public var loadBalanceKey: String?
    /// The text shown to the user.
    public var message: String?
    /// Extra JSON the server attached.
    public var customPayload: String?
    /// The numbers for a number-matching challenge, comma separated.
    public var numbersChallenge: String?
    /// Context about the login (JSON: location, device, …).
    public var contextInfo: String?
    /// `default`, `challenge` or `biometric`.
    public var pushType: String

    /// Creates a notification.
    public init(
        messageId: String, mechanismUUID: String, challenge: String, ttl: Int = 120, timeAdded: Date = Date(),
        pending: Bool = true, approved: Bool = false, loadBalanceKey: String? = nil, message: String? = nil,
        customPayload: String? = nil, numbersChallenge: String? = nil, contextInfo: String? = nil,
        pushType: String = "default"
    ) {
        self.messageId = messageId
        self.mechanismUUID = mechanismUUID
        self.challenge = challenge
        self.ttl = ttl
        self.timeAdded = timeAdded
        self.pending = pending
        self.approved = approved
        self.loadBalanceKey = loadBalanceKey
        self.message = message
        self.customPayload = customPayload
        self.numbersChallenge = numbersChallenge
        self.contextInfo = contextInfo
        self.pushType = pushType
    }

    /// `mechanismUUID-messageId`, escaped like ``Account/identifier``.
    public var identifier: String { IdentifierCoding.join([mechanismUUID, messageId]) }

    /// Whether the request has expired at `now`.
    public func isExpired(at now: Date = Date()) -> Bool {
        now >= timeAdded.addingTimeInterval(TimeInterval(ttl))
    }
}

extension PushNotification: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The notification's id, mechanism and state; the challenge shows only as `<redacted>`, so a
    /// notification can be logged safely.
    public var description: String {
        "PushNotification(\(messageId), mechanism: \(mechanismUUID), pending: \(pending), approved: \(approved), challenge: <redacted>)"
    }

    /// The same as ``description``: the challenge stays redacted in the debugger and in `debugPrint`.
    public var debugDescription: String { description }

    /// A mirror without the challenge (`<redacted>`), so `dump(_:)` and the debugger cannot
    /// reveal it.
    public var customMirror: Mirror {
        Mirror(self, children: ["messageId": messageId, "mechanismUUID": mechanismUUID, "pending": pending,
                                "approved": approved, "challenge": "<redacted>"])
    }
}

/// The token a push service gave this device, kept so the issuer can reach it.
public struct PushDeviceToken: Codable, Sendable, Hashable {
    /// The token.
    public var tokenId: String
    /// When it was received.
    public var timeAdded: Date

    /// Creates a device token.
    public init(tokenId: String, timeAdded: Date = Date()) {
        self.tokenId = tokenId
        self.timeAdded = timeAdded
    }
}
