/// An authorization code and the PKCE verifier it is exchanged with.
public struct AuthCode: Codable, Sendable {
    /// The code the authorization server gave.
    public let code: String
    /// The verifier whose challenge went with the authorization request.
    public let codeVerifier: String?
    /// The redirect URI the code was sent to, when the agent chose it (a loopback port); the
    /// exchange must name the same one. `nil`: the configuration's.
    public let redirectUri: String?
    /// The `nonce` sent with the authorization request, which the ID token must carry back.
    /// `nil`: the configuration's.
    public let nonce: String?

    /// A code and its verifier, and the redirect URI and nonce the agent used when they are
    /// not the configuration's.
    public init(code: String = "", codeVerifier: String? = nil, redirectUri: String? = nil, nonce: String? = nil) {
        self.code = code
        self.codeVerifier = codeVerifier
        self.redirectUri = redirectUri
        self.nonce = nonce
    }
}

extension AuthCode: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Nothing of the code or verifier: either lets someone finish the sign-in.
    public var description: String { "AuthCode(<redacted>)" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// Only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
