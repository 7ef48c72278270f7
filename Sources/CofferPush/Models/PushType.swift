/// What a push notification asks of the user.
public enum PushType: String, CaseIterable, Codable, Sendable {
    /// Approve or deny.
    case `default` = "default"
    /// Pick the number the sign-in page shows.
    case challenge = "challenge"
    /// Approve with biometrics.
    case biometric = "biometric"

    /// The type named `string`, compared without case.
    public static func fromString(_ string: String) throws -> PushType {
        guard let type = PushType(rawValue: string.lowercased()) else { throw PushError.invalidPushType(string) }
        return type
    }
}

/// The server a push credential is registered with.
public enum PushPlatform: String, CaseIterable, Codable, Sendable {
    /// PingAM (ForgeRock Access Management).
    case pingAM = "pingam"

    /// The platform named `string`: `pingam`, `ping_am` or `ping-am`, compared without case.
    public static func fromString(_ string: String) throws -> PushPlatform {
        switch string.lowercased() {
        case "pingam", "ping_am", "ping-am": return .pingAM
        default: throw PushError.invalidPlatform(string)
        }
    }
}
