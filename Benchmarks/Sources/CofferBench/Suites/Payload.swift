import Foundation

/// What the storage benchmarks save: a set of OAuth tokens, about 470 bytes of JSON (each token
/// is at most 128 characters: the prefixes below are longer than the seed they cut).
struct Credential: Codable, Sendable, Equatable {
    var accessToken: String
    var refreshToken: String
    var idToken: String
    var tokenType: String
    var scope: String
    var expiresAt: Date

    static func sample(_ index: Int) -> Credential {
        // Every sample is as long as every other (two base-36 digits, repeating after 1,296), so
        // that a floor writing one sample's bytes writes as many as Coffer does for any other.
        let digits = String(index % 1296, radix: 36)
        let seed = String(repeating: String(repeating: "0", count: 2 - digits.count) + digits, count: 64)
        return Credential(
            accessToken: String(seed.prefix(300)), refreshToken: String(seed.prefix(120)),
            idToken: String(seed.prefix(420)), tokenType: "Bearer", scope: "openid profile email",
            expiresAt: Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(index)))
    }
}
