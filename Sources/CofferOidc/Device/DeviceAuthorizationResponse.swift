import Foundation

/// The provider's answer to a device authorization request (RFC 8628 §3.2): what to show the
/// user, and the device code this client polls with.
public struct DeviceAuthorizationResponse: Codable, Sendable {
    /// The code the client polls the token endpoint with; a secret until the grant ends.
    public let deviceCode: String
    /// The code the user types at ``verificationUri``.
    public let userCode: String
    /// Where the user goes, on any device with a browser.
    public let verificationUri: String
    /// The same address with the user code in it, when the provider offers one (for a QR code).
    public let verificationUriComplete: String?
    /// Seconds until the codes expire.
    public let expiresIn: Int
    /// Seconds to wait between polls (5 when the provider says nothing, RFC 8628 §3.2).
    public let interval: Int

    private enum CodingKeys: String, CodingKey {
        case deviceCode = "device_code"
        case userCode = "user_code"
        case verificationUri = "verification_uri"
        // Google's name for it, before the RFC.
        case verificationUrl = "verification_url"
        case verificationUriComplete = "verification_uri_complete"
        case expiresIn = "expires_in"
        case interval
    }

    /// A response with these values.
    public init(deviceCode: String, userCode: String, verificationUri: String, verificationUriComplete: String? = nil, expiresIn: Int, interval: Int = 5) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationUri = verificationUri
        self.verificationUriComplete = verificationUriComplete
        self.expiresIn = expiresIn
        self.interval = interval
    }

    /// Reads the provider's JSON; `interval` defaults to 5 and is at least 1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        deviceCode = try container.decode(String.self, forKey: .deviceCode)
        userCode = try container.decode(String.self, forKey: .userCode)
        verificationUri = try container.decodeIfPresent(String.self, forKey: .verificationUri)
            ?? container.decode(String.self, forKey: .verificationUrl)
        verificationUriComplete = try container.decodeIfPresent(String.self, forKey: .verificationUriComplete)
        expiresIn = try container.decode(Int.self, forKey: .expiresIn)
        interval = max(1, try container.decodeIfPresent(Int.self, forKey: .interval) ?? 5)
    }

    /// Writes the RFC's JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(deviceCode, forKey: .deviceCode)
        try container.encode(userCode, forKey: .userCode)
        try container.encode(verificationUri, forKey: .verificationUri)
        try container.encodeIfPresent(verificationUriComplete, forKey: .verificationUriComplete)
        try container.encode(expiresIn, forKey: .expiresIn)
        try container.encode(interval, forKey: .interval)
    }
}

extension DeviceAuthorizationResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// What the user is shown; never the device code.
    public var description: String {
        "DeviceAuthorizationResponse(userCode: \(userCode), verificationUri: \(verificationUri), expiresIn: \(expiresIn), deviceCode: <redacted>)"
    }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// Only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

/// Where a device sign-in stands, as ``OidcDeviceClient/deviceAuthorization()`` reports it.
public enum DeviceFlowStatus: Sendable {
    /// The codes are ready: show the user ``DeviceAuthorizationResponse/userCode`` and
    /// ``DeviceAuthorizationResponse/verificationUri``.
    case started(DeviceAuthorizationResponse)
    /// The user has not finished yet; the next poll is at `nextPollAt`, `pollInterval` seconds on.
    case polling(pollCount: Int, pollInterval: Int, nextPollAt: Date)
    /// The user approved: the tokens are stored, and this is their user.
    case success(OidcUser)
    /// The user refused.
    case accessDenied
    /// The codes expired before the user finished.
    case expired
}
