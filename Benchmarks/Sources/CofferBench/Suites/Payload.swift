import Foundation

/// What the storage benchmarks save: a realistic set of OAuth tokens, about 1 KiB of JSON.
struct Credential: Codable, Sendable, Equatable {
    var accessToken: String
    var refreshToken: String
    var idToken: String
    var tokenType: String
    var scope: String
    var expiresAt: Date

    static func sample(_ index: Int) -> Credential {
        let seed = String(repeating: String(index, radix: 36), count: 64)
        return Credential(
            accessToken: String(seed.prefix(300)), refreshToken: String(seed.prefix(120)),
            idToken: String(seed.prefix(420)), tokenType: "Bearer", scope: "openid profile email",
            expiresAt: Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(index)))
    }
}
