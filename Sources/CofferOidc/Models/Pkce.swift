import Crypto
import Foundation

/// Proof Key for Code Exchange (RFC 7636): a verifier kept here, its S256 challenge sent with
/// the authorization request, and a `state` to match the redirect against.
public struct Pkce: Sendable {
    /// 64 random bytes, base64url without padding (86 characters).
    public let codeVerifier: String
    /// The verifier's SHA-256, base64url without padding.
    public let codeChallenge: String
    /// Always `S256`.
    public let codeChallengeMethod: String
    /// A random value the redirect must carry back.
    public let state: String

    /// A new verifier, its challenge and a state, from the system's secure random source.
    public static func generate() -> Pkce {
        let verifier = randomText(bytes: 64)
        return Pkce(codeVerifier: verifier, codeChallenge: challenge(for: verifier), codeChallengeMethod: "S256", state: randomText(bytes: 32))
    }

    /// The S256 challenge of `verifier`.
    static func challenge(for verifier: String) -> String {
        base64URL(Data(SHA256.hash(data: Data(verifier.utf8))))
    }

    /// `count` bytes from `SystemRandomNumberGenerator` (the kernel's getrandom), base64url.
    static func randomText(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return base64URL(Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

extension Pkce: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The method only: the verifier is a secret until the code is exchanged.
    public var description: String { "Pkce(\(codeChallengeMethod), verifier: <redacted>)" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// Only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
