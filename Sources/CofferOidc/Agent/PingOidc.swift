import CofferStorage

/// Ping's module name, as a namespace: code written for Ping's SDK that qualifies a name with
/// its module (`PingOidc.OidcConfig<T>`, as an `Agent` often does to tell it from its own
/// types) compiles against Coffer with only its imports changed.
public enum PingOidc {
    /// ``CofferOidc/OidcConfig``.
    public typealias OidcConfig<T> = CofferOidc.OidcConfig<T>
    /// ``CofferOidc/OidcClientConfig``.
    public typealias OidcClientConfig = CofferOidc.OidcClientConfig
    /// ``CofferOidc/OidcClient``.
    public typealias OidcClient = CofferOidc.OidcClient
    /// ``CofferOidc/OidcUser``.
    public typealias OidcUser = CofferOidc.OidcUser
    /// ``CofferOidc/OidcError``.
    public typealias OidcError = CofferOidc.OidcError
    /// ``CofferOidc/AuthCode``.
    public typealias AuthCode = CofferOidc.AuthCode
    /// ``CofferOidc/Pkce``.
    public typealias Pkce = CofferOidc.Pkce
    /// ``CofferOidc/OpenIdConfiguration``.
    public typealias OpenIdConfiguration = CofferOidc.OpenIdConfiguration
    /// ``CofferOidc/Agent``.
    public typealias Agent = CofferOidc.Agent
    /// ``CofferOidc/AgentDelegate``.
    public typealias AgentDelegate<T: Sendable> = CofferOidc.AgentDelegate<T>
    /// ``CofferOidc/DefaultAgent``.
    public typealias DefaultAgent = CofferOidc.DefaultAgent
    /// ``CofferOidc/UserInfo``.
    public typealias UserInfo = CofferOidc.UserInfo
    /// `Token`, CofferStorage's: Ping's JSON reads back.
    public typealias Token = CofferStorage.Token
}
