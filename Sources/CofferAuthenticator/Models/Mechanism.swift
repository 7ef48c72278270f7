import Foundation

/// How a mechanism authenticates.
public enum MechanismType: String, Codable, Sendable, CaseIterable {
    /// Counter-based one-time passwords (RFC 4226).
    case hotp
    /// Time-based one-time passwords (RFC 6238).
    case totp
    /// Push notifications approved on the device.
    case push
    /// Steam Guard: TOTP (SHA-1, 30 s) whose code is 5 characters of Steam's alphabet
    /// (``OathGenerator/steam(secret:at:)``).
    case steam

    /// Whether mechanisms of this type generate codes (all but ``push``).
    public var generatesCodes: Bool { self != .push }
}

/// The hash an OATH mechanism uses.
public enum OathAlgorithm: String, Codable, Sendable, CaseIterable {
    /// HMAC-SHA-1: the default, and what almost every issuer uses.
    case sha1
    /// HMAC-SHA-256.
    case sha256
    /// HMAC-SHA-384.
    case sha384
    /// HMAC-SHA-512.
    case sha512
    /// Only for legacy URIs; weak.
    case md5

    /// Parses a URI's `algorithm` parameter (`SHA1`, `sha-256`, `HmacSHA512`, …).
    public init?(uriValue: String) {
        let normalized = uriValue.lowercased().replacingOccurrences(of: "-", with: "")
            .replacingOccurrences(of: "hmac", with: "")
        self.init(rawValue: normalized)
    }
}

/// One way an ``Account`` authenticates: an OATH (HOTP or TOTP) generator or a push
/// registration.
///
/// Its identity is ``mechanismUUID``; (``issuer``, ``accountName``, ``type``) is unique too: an
/// account has at most one mechanism of each type. `description` never shows the secret or
/// the challenge.
public struct Mechanism: Codable, Sendable, Hashable {
    /// A unique id for this mechanism.
    public var mechanismUUID: String
    /// The owning account's issuer.
    public var issuer: String
    /// The owning account's name.
    public var accountName: String
    /// HOTP, TOTP or push.
    public var type: MechanismType
    /// The shared secret: base32 for OATH, base64 for push.
    public var secret: String
    /// The OATH hash algorithm.
    public var algorithm: OathAlgorithm
    /// The number of digits of an OATH code (6 to 8).
    public var digits: Int
    /// The TOTP time step in seconds.
    public var period: Int
    /// The HOTP counter: the next code uses this value.
    public var counter: UInt64
    /// The user id at the issuer, if given.
    public var uid: String?
    /// The issuer's id for the registered device, if given.
    public var resourceId: String?
    /// When the mechanism was added.
    public var timeAdded: Date
    /// Push: where to register the device.
    public var registrationEndpoint: URL?
    /// Push: where to send approvals.
    public var authenticationEndpoint: URL?
    /// Push: the registration message id.
    public var messageId: String?
    /// Push: the registration challenge (base64).
    public var challenge: String?

    /// Creates a mechanism.
    public init(
        mechanismUUID: String = UUID().uuidString, issuer: String, accountName: String, type: MechanismType,
        secret: String, algorithm: OathAlgorithm = .sha1, digits: Int = 6, period: Int = 30, counter: UInt64 = 0,
        uid: String? = nil, resourceId: String? = nil, timeAdded: Date = Date(), registrationEndpoint: URL? = nil,
        authenticationEndpoint: URL? = nil, messageId: String? = nil, challenge: String? = nil
    ) {
        self.mechanismUUID = mechanismUUID
        self.issuer = issuer
        self.accountName = accountName
        self.type = type
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
        self.counter = counter
        self.uid = uid
        self.resourceId = resourceId
        self.timeAdded = timeAdded
        self.registrationEndpoint = registrationEndpoint
        self.authenticationEndpoint = authenticationEndpoint
        self.messageId = messageId
        self.challenge = challenge
    }

    /// The owning account's identifier (see ``Account/identifier``).
    public var accountIdentifier: String { Account.identifier(issuer: issuer, accountName: accountName) }

    /// `issuer-accountName-type`, escaped like ``Account/identifier``.
    public var identifier: String { IdentifierCoding.join([issuer, accountName, type.rawValue]) }
}

extension Mechanism: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The mechanism's type, issuer, account name and id; the secret shows only as `<redacted>`, so
    /// a mechanism can be logged safely.
    public var description: String {
        "Mechanism(\(type.rawValue), \(issuer):\(accountName), uuid: \(mechanismUUID), secret: <redacted>)"
    }

    /// The same as ``description``: the secret stays redacted in the debugger and in `debugPrint`.
    public var debugDescription: String { description }

    /// A mirror without the secret (`<redacted>`), so `dump(_:)` and the debugger cannot reveal it.
    public var customMirror: Mirror {
        Mirror(self, children: ["mechanismUUID": mechanismUUID, "issuer": issuer, "accountName": accountName,
                                "type": type, "secret": "<redacted>"])
    }
}
