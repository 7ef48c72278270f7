import CofferOrchestrate
import CofferStorage
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs a user in with OpenID Connect and keeps their tokens in the configuration's storage,
/// as Ping's `OidcClient` does: ``token()`` returns the stored token, refreshing it once it is
/// within ``OidcClientConfig/refreshThreshold`` of its expiry; ``revoke()`` and ``endSession()``
/// end it.
///
/// Better than Ping's:
/// - Tasks that ask for a token at once, through any client or user of the same storage, share
///   one refresh (or one sign-in): a rotating refresh token is never presented twice. Revoking,
///   ending the session and storing a redirect's tokens wait for it, and it for them.
/// - A refresh that the provider refuses (400 or 401) does not throw the session away: the
///   agent is asked to sign in again, the new session is stored, and only then is the old one
///   revoked; if signing in fails too, the stored session stays and the error says to sign in
///   again. A refresh that fails otherwise (the network, a 5xx) returns its error and keeps
///   the session as it is.
/// - A refresh answer without a new refresh token keeps the old one (RFC 6749 §6).
/// - The authorization request carries `state`, and the redirect must carry it back.
public final class OidcClient: @unchecked Sendable {
    // @unchecked Sendable: `config` is Sendable; the PKCE in flight is kept in `pending`, a
    // Mutex; the session's flight is an actor.
    private let config: OidcClientConfig
    private let pending = Mutex<Pkce?>(nil)

    /// The order of this session's operations, shared with every client of the same storage.
    private var flight: SessionFlight { SessionFlight.of(config.storage) }

    /// The PKCE of the last authorization URL made (``generateAuthorizeUrl(customParams:)``).
    public var pkce: Pkce? {
        get { pending.withLock { $0 } }
        set { pending.withLock { $0 = newValue } }
    }

    /// A client for `config`.
    public init(config: OidcClientConfig) {
        self.config = config
    }

    /// The authorization URL to open in a browser, with a new PKCE challenge and `state`, and
    /// `customParams` added.
    ///
    /// - Throws: ``OidcError`` when the discovery document gave no authorization endpoint or
    ///   the redirect URI has no scheme.
    public func generateAuthorizeUrl(customParams: [String: String]? = nil) throws -> URL {
        let pkce = Pkce.generate()
        self.pkce = pkce
        let request = config.populateRequest(request: Request(), pkce: pkce, responseMode: Constants.query)
        for (name, value) in (customParams ?? [:]).sorted(by: { $0.key < $1.key }) { request.parameter(name: name, value: value) }
        guard let url = request.urlRequest.url, url.host != nil, URL(string: config.redirectUri)?.scheme != nil else {
            throw OidcError.networkError(message: "URL not found")
        }
        return url
    }

    /// Takes the code from the redirect `url`, checks its `state`, exchanges the code for tokens
    /// and stores them.
    ///
    /// - Throws: ``OidcError/authorizeError(cause:message:)`` when the URL has no code, carries
    ///   the provider's error, or a `state` that is not the one sent.
    public func extractCodeAndGetToken(from url: URL) async throws -> Token {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: true)?.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        // Taken once, and only by a redirect with the state sent: a forged redirect leaves the
        // real one to come, and a redirect delivered twice is never exchanged twice.
        let expected = config.state
        let taken: Result<Pkce, OidcError> = pending.withLock { pending in
            guard let waiting = pending else {
                return .failure(.authorizeError(message: "Authorization code not found: no authorization request is waiting (call generateAuthorizeUrl first)"))
            }
            guard let state = value(Constants.state), state == (expected ?? waiting.state) else {
                return .failure(.authorizeError(message: "The redirect's state is missing or not the one sent; nothing was exchanged"))
            }
            pending = nil
            return .success(waiting)
        }
        let pkce = try taken.get()
        if let problem = config.openId?.redirectIssuerProblem(value("iss")) { throw OidcError.authorizeError(message: problem) }
        if let error = value("error") {
            throw OidcError.authorizeError(message: "The provider refused: \(TerminalText.escaped(String(error.prefix(100))))")
        }
        guard let code = value(Constants.code) else { throw OidcError.authorizeError(message: "Authorization code not found") }
        let result: Result<Token, any Error> = await flight.exclusive {
            do {
                let token = try await self.exchangeToken(AuthCode(code: code, codeVerifier: pkce.codeVerifier))
                try await self.config.storage.save(item: token)
                return .success(token)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Stores the tokens of a sign-in made elsewhere (the device grant), in order with the
    /// session's other operations.
    func store(signedIn token: Token) async throws {
        try await config.acceptIdToken(of: token, nonce: nil)
        let result: Result<Void, any Error> = await flight.exclusive {
            do {
                try await self.config.storage.save(item: token)
                return .success(())
            } catch {
                return .failure(OidcError.unknown(cause: error, message: "The new tokens could not be stored; sign in again"))
            }
        }
        try result.get()
    }

    /// The stored session, as it is (not refreshed).
    func storedToken() async throws -> Token? {
        try await config.storage.get()
    }

    /// The redirect URI's scheme.
    public func redirectURIScheme() -> String? {
        URL(string: config.redirectUri)?.scheme
    }

    /// A valid access token: the stored one, refreshed first when it is expired (or within the
    /// threshold), or a new sign-in through the agent when there is none.
    public func token() async -> Result<Token, OidcError> {
        // The common case, without the session's flight: the provider is known and the stored
        // token valid. (Reading it while a revoke runs is the read that came just before it;
        // a refresh runs only on a token this path would not return.)
        let path = config.validTokenPath
        // time(2), whole seconds as expiries are: a vDSO call, a tenth of what Date() costs.
        if path.discovered, let storage = path.storage, let cached = try? await storage.tokenGet(),
           !cached.isExpired(threshold: path.threshold, now: Date(timeIntervalSince1970: Double(time(nil)))) {
            return .success(cached)
        }
        return await flight.token { await self.freshToken() }
    }

    private func freshToken() async -> Result<Token, OidcError> {
        do {
            try await config.oidcInitialize()
        } catch {
            return .failure(Self.oidcError(error))
        }
        config.logger.i("Getting access token")
        do {
            var stale: Token?
            if let cached = try await config.storage.get() {
                if !cached.isExpired(threshold: config.refreshThreshold) {
                    config.logger.i("Token is not expired. Returning cached token.")
                    return .success(cached)
                }
                config.logger.i("Token is expired. Attempting to refresh.")
                if cached.refreshToken != nil {
                    do {
                        return .success(try await refreshedAlone())
                    } catch OidcError.apiError(let code, let message) where code == 400 || code == 401 {
                        config.logger.e("Failed to refresh token. Signing in again.", error: OidcError.apiError(code: code, message: message))
                        stale = cached
                    }
                }
            }
            guard let agent = config.agent else { return .failure(OidcError.authorizeError(message: "Agent not configured")) }
            let token = try await exchangeToken(try await agent.authenticate())
            try await config.storage.save(item: token)
            // The old session goes only now that a new one is stored.
            if let stale { await revokeAtProvider(stale) }
            return .success(token)
        } catch {
            return .failure((error as? OidcError) ?? OidcError.authorizeError(cause: error))
        }
    }

    /// Refreshes with `refreshToken` and stores the result, after any operation of the session
    /// already under way.
    public func refreshToken(_ refreshToken: String) async throws -> Token {
        let result: Result<Token, any Error> = await flight.exclusive {
            do {
                try await self.config.oidcInitialize()
                return .success(try await self.config.storage.withExclusiveSection {
                    let current = try await self.config.storage.get()
                    // Refreshed by another holder since `refreshToken` was read: presenting it
                    // now would present a spent token. The new session is the answer.
                    if let current, let stored = current.refreshToken, stored != refreshToken { return current }
                    return try await self.refreshed(current, refreshToken)
                })
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Refreshes in the storage's exclusive section (``ExclusiveSection``): every process (or
    /// replica) sharing the session waits there, and the ones that come after the refresh read
    /// its result instead of presenting the spent refresh token again.
    private func refreshedAlone() async throws -> Token {
        let threshold = config.refreshThreshold
        return try await config.storage.withExclusiveSection {
            guard let current = try await self.config.storage.get() else {
                throw OidcError.authorizeError(message: "The session was ended elsewhere while this refresh waited; sign in again")
            }
            if !current.isExpired(threshold: threshold) {
                self.config.logger.i("Token was refreshed by another holder of the session.")
                return current
            }
            guard let refreshToken = current.refreshToken else {
                throw OidcError.authorizeError(message: "The stored session has no refresh token; sign in again")
            }
            return try await self.refreshed(current, refreshToken)
        }
    }

    private func refreshed(_ current: Token?, _ refreshToken: String) async throws -> Token {
        config.logger.i("Refreshing token")
        var token = try await config.postToTokenEndpoint([
            Constants.grant_type: Constants.refresh_token,
            Constants.refresh_token: refreshToken,
        ])
        // A provider that does not rotate sends no refresh token: the one we have stays valid.
        if token.refreshToken == nil { token.refreshToken = refreshToken }
        if token.idToken == nil {
            token.idToken = current?.idToken
        } else {
            do {
                try await config.acceptIdToken(of: token, nonce: nil, previous: current)
            } catch OidcError.authorizeError(let cause as IdTokenError, let message) where ![.issuer, .audience, .subjectChanged].contains(cause) {
                // The provider has rotated the refresh token already: losing it would end the
                // session. The tokens are kept with the ID token checked before; the new one,
                // which could not be checked now (keys unreachable, a clock off), is dropped.
                config.logger.e(message ?? "The refreshed ID token was refused", error: cause)
                token.idToken = current?.idToken
            }
        }
        do {
            try await config.storage.save(item: token)
        } catch {
            throw OidcError.unknown(cause: error, message: "The refreshed tokens could not be stored; sign in again")
        }
        return token
    }

    /// Deletes the stored tokens, then revokes them at the provider (best effort).
    public func revoke() async {
        _ = await flight.exclusive {
            // In the session's section: a refresh under way elsewhere finishes first, and its
            // tokens are the ones revoked, not written back after the delete.
            (try? await self.config.storage.withExclusiveSection { await self.revoke(nil) }) ?? false
        }
    }

    /// Deletes the stored session first (what matters most, and needs no network), then
    /// revokes its tokens at the provider; `false` when the session could not be read or
    /// deleted, or the provider could not be reached.
    @discardableResult
    private func revoke(_ token: Token?) async -> Bool {
        var revoked = token
        if revoked == nil {
            do {
                revoked = try await config.storage.get()
            } catch {
                config.logger.e("Failed to read the stored token; nothing was revoked", error: error)
                return false
            }
        }
        guard let revoked else { return true }
        var deleted = true
        do {
            try await config.storage.delete()
        } catch {
            config.logger.e("Failed to delete token", error: error)
            deleted = false
        }
        do {
            try await config.oidcInitialize()
            await revokeAtProvider(revoked)
        } catch {
            config.logger.e("The provider cannot be reached; the tokens were not revoked there", error: error)
            return false
        }
        return deleted
    }

    /// RFC 7009: the refresh token (which ends the grant) and the access token; `false` when
    /// the provider could not be told of either (why is logged).
    @discardableResult
    func revokeAtProvider(_ token: Token) async -> Bool {
        let tokens = [token.refreshToken.map { ($0, Constants.refresh_token) }, (token.accessToken, "access_token")].compactMap { $0 }
        var told = true
        do {
            try await config.oidcInitialize()
        } catch {
            config.logger.e("The provider cannot be reached; the tokens were not revoked there", error: error)
            return false
        }
        for (value, hint) in tokens {
            do {
                let url = try config.endpoint(\.revocationEndpointIfPresent, named: "revocation_endpoint")
                let (data, status) = try await config.postForm(to: url, [Constants.token: value, "token_type_hint": hint])
                // RFC 7009 §2.2: 200 whether or not the token was still valid.
                if status != 200 { throw OidcError.apiError(code: status, message: OidcError.answer(data)) }
            } catch {
                config.logger.e("Failed to revoke token", error: error)
                told = false
            }
        }
        return told
    }

    /// Revokes the tokens and asks the agent to end the session at the provider.
    @discardableResult
    public func endSession() async -> Bool {
        await endSession { idToken in
            try await self.config.agent?.endSession(idToken: idToken) ?? false
        }
    }

    /// Deletes the stored session, revokes its tokens and calls `signOff` with the ID token;
    /// `false` when any of it failed (the session is deleted whenever it could be read).
    @discardableResult
    public func endSession(signOff: @escaping @Sendable (String) async throws -> Bool) async -> Bool {
        await flight.exclusive {
            let token: Token?
            let deleted: Bool
            do {
                (token, deleted) = try await self.config.storage.withExclusiveSection {
                    guard let token = try await self.config.storage.get() else { return (nil, true) }
                    return (token, await self.revoke(token))
                }
            } catch {
                self.config.logger.e("Failed to end session", error: error)
                return false
            }
            guard let token else { return true }
            guard let idToken = token.idToken else { return deleted }
            do {
                return try await signOff(idToken) && deleted
            } catch {
                self.config.logger.e("Failed to end session", error: error)
                return false
            }
        }
    }

    /// The user's claims from the userinfo endpoint, with a valid access token.
    public func userinfo() async -> Result<UserInfo, OidcError> {
        do {
            try await config.oidcInitialize()
            guard let httpClient = config.httpClient else { throw OidcError.networkError(message: "HTTP client not found") }
            guard config.openId != nil else { throw OidcError.unknown(message: "OpenID configuration not found") }
            let token: Token
            switch await self.token() {
            case .failure(let error): return .failure(error)
            case .success(let valid): token = valid
            }
            let request = Request()
            request.url(try config.endpoint(\.userinfoEndpointIfPresent, named: "userinfo_endpoint"))
            request.header(name: Request.Constants.authorization, value: "Bearer \(token.accessToken)")
            let (data, response) = try await httpClient.sendRequest(request: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else { throw OidcError.apiError(code: status, message: OidcError.answer(data)) }
            guard let claims = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                throw OidcError.unknown(message: "The userinfo endpoint's answer is not a JSON object")
            }
            return .success(claims.compactMapValues(Self.sendable))
        } catch {
            return .failure(Self.oidcError(error))
        }
    }

    private func exchangeToken(_ authCode: AuthCode) async throws -> Token {
        try await config.oidcInitialize()
        config.logger.i("Exchanging token")
        var form = [
            Constants.grant_type: Constants.authorization_code,
            Constants.code: authCode.code,
            Constants.redirect_uri: authCode.redirectUri ?? config.redirectUri,
        ]
        if let verifier = authCode.codeVerifier { form[Constants.code_verifier] = verifier }
        let token = try await config.postToTokenEndpoint(form)
        try await config.acceptIdToken(of: token, nonce: authCode.nonce ?? config.nonce)
        return token
    }

    private static func oidcError(_ error: any Error) -> OidcError {
        (error as? OidcError) ?? .unknown(cause: error)
    }

    /// A JSON value as a Sendable one (strings, numbers, booleans, arrays and objects of them).
    private static func sendable(_ value: Any) -> (any Sendable)? {
        switch value {
        case let text as String: text
        case let number as NSNumber:
            // JSON's true and false arrive as NSNumbers of type `c` (char); whole numbers as Int.
            if String(cString: number.objCType) == "c" { number.boolValue }
            else if number.doubleValue == number.doubleValue.rounded(), abs(number.doubleValue) < 1e15 { number.intValue }
            else { number.doubleValue }
        case let flag as Bool: flag
        case let list as [Any]: list.compactMap(sendable)
        case let object as [String: Any]: object.compactMapValues(sendable)
        default: nil
        }
    }

    /// The names OpenID requests use.
    public enum Constants {
        /// `client_id`.
        public static let client_id = "client_id"
        /// `grant_type`.
        public static let grant_type = "grant_type"
        /// `refresh_token`.
        public static let refresh_token = "refresh_token"
        /// `token`.
        public static let token = "token"
        /// `authorization_code`.
        public static let authorization_code = "authorization_code"
        /// `redirect_uri`.
        public static let redirect_uri = "redirect_uri"
        /// `code_verifier`.
        public static let code_verifier = "code_verifier"
        /// `code`.
        public static let code = "code"
        /// `id_token_hint`.
        public static let id_token_hint = "id_token_hint"
    }
}

extension OidcClient.Constants {
    static let response_mode = "response_mode"
    static let response_type = "response_type"
    static let scope = "scope"
    static let code_challenge = "code_challenge"
    static let code_challenge_method = "code_challenge_method"
    static let acr_values = "acr_values"
    static let display = "display"
    static let nonce = "nonce"
    static let prompt = "prompt"
    static let ui_locales = "ui_locales"
    static let login_hint = "login_hint"
    static let state = "state"
    static let piflow = "pi.flow"
    static let query = "query"
}

private typealias Constants = OidcClient.Constants

extension OidcClientConfig {
    /// The authorization request: Ping's parameters, and `state`.
    ///
    /// `redirectUri` and `nonce` replace the configuration's (a loopback agent's port, a nonce
    /// made for this request).
    func populateRequest(request: Request, pkce: Pkce, responseMode: String = Constants.piflow, redirectUri: String? = nil, nonce: String? = nil) -> Request {
        request.url(openId?.authorizationEndpoint ?? "")
        if !responseMode.isEmpty { request.parameter(name: Constants.response_mode, value: responseMode) }
        request.parameter(name: Constants.client_id, value: clientId)
        request.parameter(name: Constants.response_type, value: Constants.code)
        request.parameter(name: Constants.scope, value: scopes.sorted().joined(separator: " "))
        request.parameter(name: Constants.redirect_uri, value: redirectUri ?? self.redirectUri)
        request.parameter(name: Constants.code_challenge, value: pkce.codeChallenge)
        request.parameter(name: Constants.code_challenge_method, value: pkce.codeChallengeMethod)
        request.parameter(name: Constants.state, value: state ?? pkce.state)
        let optional: [(String, String?)] = [
            (Constants.acr_values, acrValues), (Constants.display, display), (Constants.login_hint, loginHint),
            (Constants.nonce, nonce ?? self.nonce), (Constants.prompt, prompt), (Constants.ui_locales, uiLocales),
        ]
        for (name, value) in optional { if let value { request.parameter(name: name, value: value) } }
        for (name, value) in additionalParameters.sorted(by: { $0.key < $1.key }) { request.parameter(name: name, value: value) }
        return request
    }
}
