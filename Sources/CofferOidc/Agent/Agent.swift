/// How an authorization code is obtained (a browser, a device grant, a test's stand-in) and how a
/// session is ended at the provider, as Ping's Oidc module declares it.
public protocol Agent<T>: Sendable {
    /// The agent's own settings.
    associatedtype T
    /// A function that makes the agent's settings (its defaults).
    func config() -> () -> T
    /// Ends the session at the provider (RP-initiated logout); `true` when it did.
    func endSession(oidcConfig: OidcConfig<T>, idToken: String) async throws -> Bool
    /// Obtains an authorization code.
    func authorize(oidcConfig: OidcConfig<T>) async throws -> AuthCode
}

/// What an agent is given: the client's configuration and its own settings.
public final class OidcConfig<T> {
    /// The client's configuration.
    public let oidcClientConfig: OidcClientConfig
    let config: T

    init(oidcClientConfig: OidcClientConfig, config: T) {
        self.oidcClientConfig = oidcClientConfig
        self.config = config
    }
}

/// An agent that cannot sign anyone in: `token()` without a stored session fails with Ping's
/// "No AuthCode is available."
public final class DefaultAgent: Agent {
    /// No settings.
    public typealias T = Void

    /// The agent.
    public init() {}

    /// No settings.
    public func config() -> () -> Void { {} }

    /// Does nothing; `false`.
    @discardableResult
    public func endSession(oidcConfig: OidcConfig<Void>, idToken: String) async throws -> Bool { false }

    /// Always fails: there is no way to get a code.
    public func authorize(oidcConfig: OidcConfig<Void>) async throws -> AuthCode {
        throw OidcError.authorizeError(message: "No AuthCode is available.")
    }
}

/// An agent with its settings, as the client calls it.
public protocol AgentDelegateProtocol: Sendable {
    /// The agent's settings.
    associatedtype T
    /// Obtains an authorization code.
    func authenticate() async throws -> AuthCode
    /// Ends the session at the provider.
    func endSession(idToken: String) async throws -> Bool
}

/// An ``OidcConfig`` is Sendable when the agent's settings are: both its properties are
/// immutable.
extension OidcConfig: Sendable where T: Sendable {}

/// An ``Agent`` bound to a configuration and its settings (which must be Sendable: the client
/// calls the agent from any task).
public final class AgentDelegate<T: Sendable>: AgentDelegateProtocol {
    let agent: any Agent<T>
    let oidcConfig: OidcConfig<T>

    init(agent: any Agent<T>, agentConfig: T, oidcClientConfig: OidcClientConfig) {
        self.agent = agent
        self.oidcConfig = OidcConfig(oidcClientConfig: oidcClientConfig, config: agentConfig)
    }

    /// Asks the agent for a code.
    public func authenticate() async throws -> AuthCode {
        try await agent.authorize(oidcConfig: oidcConfig)
    }

    /// Asks the agent to end the session.
    @discardableResult
    public func endSession(idToken: String) async throws -> Bool {
        try await agent.endSession(oidcConfig: oidcConfig, idToken: idToken)
    }
}
