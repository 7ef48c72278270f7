import Synchronization

/// A signed-in user, as Ping's Oidc module declares one.
public protocol User: Sendable {
    /// A valid access token.
    func token() async -> Result<Token, OidcError>
    /// Refreshes the token now.
    func refresh() async -> Result<Token, OidcError>
    /// Revokes the tokens and forgets them.
    func revoke() async
    /// The user's claims; with `cache`, read once and kept.
    func userinfo(cache: Bool) async -> Result<UserInfo, OidcError>
    /// Ends the session at the provider and forgets the tokens.
    func logout() async
}

/// A ``User`` backed by an ``OidcClient``.
public final class OidcUser: User, @unchecked Sendable {
    // @unchecked Sendable: `claims` is a Mutex; `oidcClient` is Sendable.
    private let claims = Mutex<UserInfo?>(nil)
    private let oidcClient: OidcClient

    /// A user of the client `config` makes.
    public init(config: OidcClientConfig) {
        oidcClient = OidcClient(config: config)
    }

    /// A valid access token.
    public func token() async -> Result<Token, OidcError> {
        await oidcClient.token()
    }

    /// Refreshes now with the stored refresh token (one call to the provider, after any refresh
    /// already under way).
    public func refresh() async -> Result<Token, OidcError> {
        guard let stored = try? await oidcClient.storedToken(), let refreshToken = stored.refreshToken else {
            return .failure(OidcError.unknown(cause: nil, message: "Failed to get the refresh token"))
        }
        do {
            return .success(try await oidcClient.refreshToken(refreshToken))
        } catch {
            return .failure(OidcError.authorizeError(cause: error, message: error.localizedDescription))
        }
    }

    /// Revokes the tokens and forgets them, and the claims read with them.
    public func revoke() async {
        await oidcClient.revoke()
        claims.withLock { $0 = nil }
    }

    /// The user's claims, kept after the first read when `cache` is on.
    public func userinfo(cache: Bool = true) async -> Result<UserInfo, OidcError> {
        if cache, let kept = claims.withLock({ $0 }) { return .success(kept) }
        let result = await oidcClient.userinfo()
        if cache, case .success(let read) = result { claims.withLock { $0 = read } }
        return result
    }

    /// Ends the session and forgets the tokens and claims.
    public func logout() async {
        _ = await oidcClient.endSession()
        claims.withLock { $0 = nil }
    }
}
