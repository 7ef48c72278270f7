import Foundation

/// The token a push service gave this device; at most one is current.
public struct PushDeviceToken: Codable, Identifiable, Sendable, Equatable {
    /// The token.
    public let token: String
    /// When it was stored.
    public let createdAt: Date
    /// Its id.
    public let id: String

    /// A token.
    public init(id: String = UUID().uuidString, token: String, createdAt: Date = Date()) {
        self.id = id
        self.token = token
        self.createdAt = createdAt
    }

    /// Equal when the tokens are, whatever the ids and dates (as in Ping).
    public static func == (lhs: PushDeviceToken, rhs: PushDeviceToken) -> Bool { lhs.token == rhs.token }
}
