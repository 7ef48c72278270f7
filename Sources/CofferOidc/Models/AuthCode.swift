/// An authorization code and the PKCE verifier it is exchanged with.
public struct AuthCode: Codable, Sendable {
    /// The code the authorization server gave.
    public let code: String
    /// The verifier whose challenge went with the authorization request.
    public let codeVerifier: String?

    /// A code and its verifier.
    public init(code: String = "", codeVerifier: String? = nil) {
        self.code = code
        self.codeVerifier = codeVerifier
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
