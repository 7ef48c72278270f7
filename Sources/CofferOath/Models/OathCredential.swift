import Foundation

/// One OATH credential: an account at an issuer and the secret its codes come from, the way
/// Ping's Oath module keeps it (account and mechanism in one value).
///
/// The secret is not part of its `Codable` form (JSON holds metadata only; storages keep the
/// secret apart) and is never shown by `description`, `dump` or string interpolation.
/// ``secret`` reads it, for storages written outside this module (Ping's is internal).
public struct OathCredential: Codable, Identifiable, Sendable, CustomStringConvertible, CustomReflectable {
    /// The credential's id (a UUID unless given).
    public let id: String
    /// The user's id at the issuer (`uid`).
    public let userId: String?
    /// The issuer's id for this credential (`oid`).
    public let resourceId: String?
    /// The issuer.
    public let issuer: String
    /// The issuer as shown.
    public var displayIssuer: String
    /// The account name.
    public let accountName: String
    /// The account name as shown.
    public var displayAccountName: String
    /// TOTP or HOTP.
    public let oathType: OathType
    /// The HMAC algorithm.
    public let oathAlgorithm: OathAlgorithm
    /// The code length.
    public let digits: Int
    /// The TOTP period in seconds.
    public let period: Int
    /// The HOTP counter: the next code uses this value.
    public var counter: Int
    /// When the credential was made.
    public let createdAt: Date
    /// The issuer's logo URL.
    public let imageURL: String?
    /// The background colour, hexadecimal without `#`.
    public let backgroundColor: String?
    /// The issuer's policies, a JSON object keyed by policy name.
    public let policies: String?
    /// The policy that locked the credential.
    public var lockingPolicy: String?
    /// Whether a policy locked the credential (no codes while locked).
    public var isLocked: Bool
    var secretKey: String

    /// The base32 secret as the enrolment URI gave it. Handle with care: it is the credential.
    public var secret: String { secretKey }
    /// `totp` or `hotp`.
    public var type: String { oathType.rawValue }
    /// `SHA1`, `SHA256` or `SHA512`.
    public var algorithm: String { oathAlgorithm.rawValue }
    /// `<issuer>:<accountName> (<type>)`.
    public var description: String { "\(issuer):\(accountName) (\(type))" }

    /// Every stored property but the secret.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "id": id, "userId": userId as Any, "resourceId": resourceId as Any, "issuer": issuer,
            "displayIssuer": displayIssuer, "accountName": accountName, "displayAccountName": displayAccountName,
            "oathType": oathType, "oathAlgorithm": oathAlgorithm, "digits": digits, "period": period,
            "counter": counter, "createdAt": createdAt, "imageURL": imageURL as Any,
            "backgroundColor": backgroundColor as Any, "policies": policies as Any,
            "lockingPolicy": lockingPolicy as Any, "isLocked": isLocked,
        ], displayStyle: .struct)
    }

    /// A credential. `displayIssuer` and `displayAccountName` default to `issuer` and
    /// `accountName`.
    public init(
        id: String = UUID().uuidString,
        userId: String? = nil,
        resourceId: String? = nil,
        issuer: String,
        displayIssuer: String? = nil,
        accountName: String,
        displayAccountName: String? = nil,
        oathType: OathType,
        oathAlgorithm: OathAlgorithm = .sha1,
        digits: Int = 6,
        period: Int = 30,
        counter: Int = 0,
        createdAt: Date = Date(),
        imageURL: String? = nil,
        backgroundColor: String? = nil,
        policies: String? = nil,
        lockingPolicy: String? = nil,
        isLocked: Bool = false,
        secretKey: String
    ) {
        self.id = id
        self.userId = userId
        self.resourceId = resourceId
        self.issuer = issuer
        self.displayIssuer = displayIssuer ?? issuer
        self.accountName = accountName
        self.displayAccountName = displayAccountName ?? accountName
        self.oathType = oathType
        self.oathAlgorithm = oathAlgorithm
        self.digits = digits
        self.period = period
        self.counter = counter
        self.createdAt = createdAt
        self.imageURL = imageURL
        self.backgroundColor = backgroundColor
        self.policies = policies
        self.lockingPolicy = lockingPolicy
        self.isLocked = isLocked
        self.secretKey = secretKey
    }

    /// Parses an `otpauth://` or `mfauth://` URI; nothing is stored.
    public static func fromUri(_ uri: String) async throws -> OathCredential {
        try OathUriParser.parse(uri)
    }

    /// The credential as an `otpauth://` URI, secret included.
    public func toUri() async throws -> String {
        try OathUriParser.format(self)
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

    /// `credential` with `secretKey` (Ping's internal spelling of ``withSecret(_:)``).
    static func withSecret(_ credential: OathCredential, secretKey: String) -> OathCredential {
        credential.withSecret(secretKey)
    }

    /// This credential with `secretKey` as its secret (what storages do after reading the
    /// metadata and the secret apart).
    public func withSecret(_ secretKey: String) -> OathCredential {
        OathCredential(
            id: id, userId: userId, resourceId: resourceId, issuer: issuer, displayIssuer: displayIssuer,
            accountName: accountName, displayAccountName: displayAccountName, oathType: oathType,
            oathAlgorithm: oathAlgorithm, digits: digits, period: period, counter: counter, createdAt: createdAt,
            imageURL: imageURL, backgroundColor: backgroundColor, policies: policies, lockingPolicy: lockingPolicy,
            isLocked: isLocked, secretKey: secretKey)
    }

    // MARK: - Codable: everything but the secret

    private enum CodingKeys: String, CodingKey {
        case id, userId, resourceId, issuer, displayIssuer, accountName, displayAccountName, oathType, oathAlgorithm
        case digits, period, counter, createdAt, imageURL, backgroundColor, policies, lockingPolicy, isLocked
    }

    /// Reads the JSON Ping writes; the secret is empty until a storage attaches it.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        userId = try container.decodeIfPresent(String.self, forKey: .userId)
        resourceId = try container.decodeIfPresent(String.self, forKey: .resourceId)
        issuer = try container.decode(String.self, forKey: .issuer)
        displayIssuer = try container.decode(String.self, forKey: .displayIssuer)
        accountName = try container.decode(String.self, forKey: .accountName)
        displayAccountName = try container.decode(String.self, forKey: .displayAccountName)
        oathType = try container.decode(OathType.self, forKey: .oathType)
        oathAlgorithm = try container.decode(OathAlgorithm.self, forKey: .oathAlgorithm)
        digits = try container.decode(Int.self, forKey: .digits)
        period = try container.decode(Int.self, forKey: .period)
        counter = try container.decode(Int.self, forKey: .counter)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        imageURL = try container.decodeIfPresent(String.self, forKey: .imageURL)
        backgroundColor = try container.decodeIfPresent(String.self, forKey: .backgroundColor)
        policies = try container.decodeIfPresent(String.self, forKey: .policies)
        lockingPolicy = try container.decodeIfPresent(String.self, forKey: .lockingPolicy)
        isLocked = try container.decode(Bool.self, forKey: .isLocked)
        secretKey = ""
    }

    /// Writes the JSON Ping writes: no secret; absent optionals omitted.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(userId, forKey: .userId)
        try container.encodeIfPresent(resourceId, forKey: .resourceId)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(displayIssuer, forKey: .displayIssuer)
        try container.encode(accountName, forKey: .accountName)
        try container.encode(displayAccountName, forKey: .displayAccountName)
        try container.encode(oathType, forKey: .oathType)
        try container.encode(oathAlgorithm, forKey: .oathAlgorithm)
        try container.encode(digits, forKey: .digits)
        try container.encode(period, forKey: .period)
        try container.encode(counter, forKey: .counter)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(imageURL, forKey: .imageURL)
        try container.encodeIfPresent(backgroundColor, forKey: .backgroundColor)
        try container.encodeIfPresent(policies, forKey: .policies)
        try container.encodeIfPresent(lockingPolicy, forKey: .lockingPolicy)
        try container.encode(isLocked, forKey: .isLocked)
    }
}
