import Foundation

/// One push credential: an account at a PingAM server that sends this device sign-in requests,
/// the way Ping's Push module keeps it.
///
/// ``id`` is the mechanism id the server knows (sent at registration, returned in every
/// notification): it never changes. The shared secret is part of the `Codable` form, as in Ping;
/// `description` and `dump` never show it.
public struct PushCredential: Codable, Identifiable, Sendable, CustomStringConvertible, CustomReflectable {
    /// The credential's id, the server's mechanism id.
    public let id: String
    /// The user's id at the server (`d`).
    public let userId: String?
    /// The server's id for this registration (`pid`).
    public let resourceId: String
    /// The issuer.
    public let issuer: String
    /// The issuer as shown.
    public var displayIssuer: String
    /// The account name.
    public let accountName: String
    /// The account name as shown.
    public var displayAccountName: String
    /// The server endpoint, without its query.
    public let serverEndpoint: String
    let sharedSecret: String
    /// When the credential was made.
    public let createdAt: Date
    /// The issuer's logo URL.
    public let imageURL: String?
    /// The background colour.
    public let backgroundColor: String?
    /// The issuer's policies, a JSON object keyed by policy name.
    public let policies: String?
    /// The policy that locked the credential.
    public var lockingPolicy: String?
    /// Whether a policy locked the credential (no approvals while locked).
    public var isLocked: Bool
    /// The server platform.
    public let platform: PushPlatform
    private var extra: AdditionalData

    /// Data a handler attached; never stored.
    public var additionalData: [String: Any]? {
        get { extra.dictionary }
        set { extra = AdditionalData(newValue) }
    }

    /// The shared secret (standard base64 with padding). Handle with care: it signs responses.
    public var secret: String { sharedSecret }
    /// Where the device registers: ``serverEndpoint`` + `?_action=register`.
    public var registrationEndpoint: String { serverEndpoint + "?_action=register" }
    /// Where approvals go: ``serverEndpoint`` + `?_action=authenticate`.
    public var authenticationEndpoint: String { serverEndpoint + "?_action=authenticate" }
    /// Where a new device token goes: ``serverEndpoint`` + `?_action=refresh`.
    public var updateEndpoint: String { serverEndpoint + "?_action=refresh" }
    /// `PushCredential(id: …, issuer: …, account: …, platform: …, locked: …)`, without the secret.
    public var description: String {
        "PushCredential(id: \(id), issuer: \(displayIssuer), account: \(displayAccountName), platform: \(platform.rawValue), locked: \(isLocked))"
    }

    /// Every stored property but the secret.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "id": id, "userId": userId as Any, "resourceId": resourceId, "issuer": issuer, "displayIssuer": displayIssuer,
            "accountName": accountName, "displayAccountName": displayAccountName, "serverEndpoint": serverEndpoint,
            "createdAt": createdAt, "imageURL": imageURL as Any, "backgroundColor": backgroundColor as Any,
            "policies": policies as Any, "lockingPolicy": lockingPolicy as Any, "isLocked": isLocked, "platform": platform,
        ], displayStyle: .struct)
    }

    /// A credential. `resourceId` defaults to `id`; the display names to the names.
    public init(
        id: String = UUID().uuidString,
        userId: String? = nil,
        resourceId: String? = nil,
        issuer: String,
        displayIssuer: String? = nil,
        accountName: String,
        displayAccountName: String? = nil,
        serverEndpoint: String,
        sharedSecret: String,
        createdAt: Date = Date(),
        imageURL: String? = nil,
        backgroundColor: String? = nil,
        policies: String? = nil,
        lockingPolicy: String? = nil,
        isLocked: Bool = false,
        platform: PushPlatform = .pingAM,
        additionalData: [String: Any]? = nil
    ) {
        self.id = id
        self.userId = userId
        self.resourceId = resourceId ?? id
        self.issuer = issuer
        self.displayIssuer = displayIssuer ?? issuer
        self.accountName = accountName
        self.displayAccountName = displayAccountName ?? accountName
        self.serverEndpoint = serverEndpoint
        self.sharedSecret = sharedSecret
        self.createdAt = createdAt
        self.imageURL = imageURL
        self.backgroundColor = backgroundColor
        self.policies = policies
        self.lockingPolicy = lockingPolicy
        self.isLocked = isLocked
        self.platform = platform
        self.extra = AdditionalData(additionalData)
    }

    /// Parses a `pushauth://` or `mfauth://` URI (``PushUriParser/parse(_:)``); nothing is stored.
    public static func fromUri(_ uri: String) async throws -> PushCredential {
        try await PushUriParser.parse(uri)
    }

    /// The credential as a `pushauth://` URI (``PushUriParser/format(_:)``).
    public func toUri() async throws -> String {
        try await PushUriParser.format(self)
    }

    /// Locks the credential, naming the policy that locked it.
    public mutating func lockCredential(policyName: String) {
        isLocked = true
        lockingPolicy = policyName
    }

    /// Unlocks the credential.
    public mutating func unlockCredential() {
        isLocked = false
        lockingPolicy = nil
    }

    // MARK: - Codable: Ping's keys, the secret included, additionalData never

    private enum CodingKeys: String, CodingKey {
        case id, userId, resourceId, issuer, displayIssuer, accountName, displayAccountName, serverEndpoint, sharedSecret
        case createdAt, imageURL, backgroundColor, policies, lockingPolicy, isLocked, platform
    }

    /// Reads Ping's JSON.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        userId = try container.decodeIfPresent(String.self, forKey: .userId)
        resourceId = try container.decode(String.self, forKey: .resourceId)
        issuer = try container.decode(String.self, forKey: .issuer)
        displayIssuer = try container.decode(String.self, forKey: .displayIssuer)
        accountName = try container.decode(String.self, forKey: .accountName)
        displayAccountName = try container.decode(String.self, forKey: .displayAccountName)
        serverEndpoint = try container.decode(String.self, forKey: .serverEndpoint)
        sharedSecret = try container.decode(String.self, forKey: .sharedSecret)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        imageURL = try container.decodeIfPresent(String.self, forKey: .imageURL)
        backgroundColor = try container.decodeIfPresent(String.self, forKey: .backgroundColor)
        policies = try container.decodeIfPresent(String.self, forKey: .policies)
        lockingPolicy = try container.decodeIfPresent(String.self, forKey: .lockingPolicy)
        isLocked = try container.decode(Bool.self, forKey: .isLocked)
        platform = try container.decode(PushPlatform.self, forKey: .platform)
        extra = AdditionalData(nil)
    }

    /// Writes Ping's JSON (absent optionals omitted).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(userId, forKey: .userId)
        try container.encode(resourceId, forKey: .resourceId)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(displayIssuer, forKey: .displayIssuer)
        try container.encode(accountName, forKey: .accountName)
        try container.encode(displayAccountName, forKey: .displayAccountName)
        try container.encode(serverEndpoint, forKey: .serverEndpoint)
        try container.encode(sharedSecret, forKey: .sharedSecret)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(imageURL, forKey: .imageURL)
        try container.encodeIfPresent(backgroundColor, forKey: .backgroundColor)
        try container.encodeIfPresent(policies, forKey: .policies)
        try container.encodeIfPresent(lockingPolicy, forKey: .lockingPolicy)
        try container.encode(isLocked, forKey: .isLocked)
        try container.encode(platform, forKey: .platform)
    }
}

extension PushCredential {
    /// This credential with another user id or shared secret (what storages do after opening
    /// the secret, and the client when a notification names the user).
    package func replacing(userId: String? = nil, sharedSecret: String? = nil) -> PushCredential {
        PushCredential(
            id: id, userId: userId ?? self.userId, resourceId: resourceId, issuer: issuer, displayIssuer: displayIssuer,
            accountName: accountName, displayAccountName: displayAccountName, serverEndpoint: serverEndpoint,
            sharedSecret: sharedSecret ?? self.sharedSecret, createdAt: createdAt, imageURL: imageURL, backgroundColor: backgroundColor,
            policies: policies, lockingPolicy: lockingPolicy, isLocked: isLocked, platform: platform)
    }
}
