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
/// - The tasks of one client that ask for a token at once share one refresh (or one sign-in):
///   a rotating refresh token is never presented twice.
/// - A refresh that the provider refuses does not throw the session away: the agent is asked
///   to sign in again, the new session is stored, and only then is the old one revoked; if
///   signing in fails too, the stored session stays and the error says to sign in again.
/// - A refresh answer without a new refresh token keeps the old one (RFC 6749 §6).
/// - The authorization request carries `state`, and the redirect must carry it back.
public final class OidcClient: @unchecked Sendable {
    // @unchecked Sendable: `config` is Sendable; the PKCE in flight is kept in `pending`, a
    // Mutex; `flight` is an actor.
    private let config: OidcClientConfig
    private let pending = Mutex<Pkce?>(nil)
    private let flight = TokenFlight()

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
        guard let pkce else { throw OidcError.authorizeError(message: "Authorization code not found") }
        if let error = value("error") {
            throw OidcError.authorizeError(message: "The provider refused: \(TerminalText.escaped(String(error.prefix(100))))")
        }
        guard let code = value(Constants.code) else { throw OidcError.authorizeError(message: "Authorization code not found") }
        guard value("state").map({ $0 == (config.state ?? pkce.state) }) ?? true else {
            throw OidcError.authorizeError(message: "The redirect's state is not the one sent; the code was not used")
        }
        let token = try await exchangeToken(AuthCode(code: code, codeVerifier: pkce.codeVerifier))
        self.pkce = nil
        try await config.storage.save(item: token)
        return token
    }

    /// The redirect URI's scheme.
    public func redirectURIScheme() -> String? {
        URL(string: config.redirectUri)?.scheme
    }

    /// A valid access token: the stored one, refreshed first when it is expired (or within the
    /// threshold), or a new sign-in through the agent when there is none.
    public func token() async -> Result<Token, OidcError> {
        await flight.run { await self.freshToken() }
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
                if let refreshToken = cached.refreshToken {
                    do {
                        return .success(try await refreshed(cached, refreshToken))
                    } catch {
                        config.logger.e("Failed to refresh token. Signing in again.", error: error)
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

    /// Refreshes with `refreshToken` and stores the result.
    public func refreshToken(_ refreshToken: String) async throws -> Token {
        try await config.oidcInitialize()
        return try await refreshed(try await config.storage.get(), refreshToken)
    }

    private func refreshed(_ current: Token?, _ refreshToken: String) async throws -> Token {
        config.logger.i("Refreshing token")
        var token = try await post(to: \.tokenEndpoint, [
            Constants.grant_type: Constants.refresh_token,
            Constants.refresh_token: refreshToken,
            Constants.client_id: config.clientId,
        ])
        // A provider that does not rotate sends no refresh token: the one we have stays valid.
        if token.refreshToken == nil { token.refreshToken = refreshToken }
        if token.idToken == nil { token.idToken = current?.idToken }
        try await config.storage.save(item: token)
        return token
    }

    /// Deletes the stored tokens, then revokes them at the provider (best effort).
    public func revoke() async {
        await revoke(nil)
    }

    private func revoke(_ token: Token?) async {
        var revoked = token
        if revoked == nil { revoked = try? await config.storage.get() }
        guard let revoked else { return }
        do {
            try await config.storage.delete()
            try await config.oidcInitialize()
        } catch {
            config.logger.e("Failed to delete token", error: error)
        }
        await revokeAtProvider(revoked)
    }

    /// RFC 7009: the refresh token (which ends the grant) and the access token.
    private func revokeAtProvider(_ token: Token) async {
        let tokens = [token.refreshToken.map { ($0, Constants.refresh_token) }, (token.accessToken, "access_token")].compactMap { $0 }
        for (value, hint) in tokens {
            do {
                guard let url = config.openId?.revocationEndpoint, !url.isEmpty, let httpClient = config.httpClient else {
                    config.logger.e("OpenID configuration not found", error: nil)
                    return
                }
                let request = Request()
                request.url(url)
                request.form(formData: [Constants.client_id: config.clientId, Constants.token: value, "token_type_hint": hint])
                _ = try await httpClient.sendRequest(request: request)
            } catch {
                config.logger.e("Failed to revoke token", error: error)
            }
        }
    }

    /// Revokes the tokens and asks the agent to end the session at the provider.
    @discardableResult
    public func endSession() async -> Bool {
        await endSession { idToken in
            try await self.config.agent?.endSession(idToken: idToken) ?? false
        }
    }

    /// Revokes the tokens and calls `signOff` with the ID token.
    @discardableResult
    public func endSession(signOff: @escaping @Sendable (String) async throws -> Bool) async -> Bool {
        do {
            try await config.oidcInitialize()
            if let token = try await config.storage.get() {
                await revoke(token)
                if let idToken = token.idToken { return try await signOff(idToken) }
            }
        } catch {
            config.logger.e("Failed to end session", error: error)
            return false
        }
        return true
    }

    /// The user's claims from the userinfo endpoint, with a valid access token.
    public func userinfo() async -> Result<UserInfo, OidcError> {
        do {
            try await config.oidcInitialize()
            guard let httpClient = config.httpClient else { throw OidcError.networkError(message: "HTTP client not found") }
            guard let openId = config.openId else { throw OidcError.unknown(message: "OpenID configuration not found") }
            let token: Token
            switch await self.token() {
            case .failure(let error): return .failure(error)
            case .success(let valid): token = valid
            }
            let request = Request()
            request.url(openId.userinfoEndpoint)
            request.header(name: Request.Constants.authorization, value: "Bearer \(token.accessToken)")
            let (data, response) = try await httpClient.sendRequest(request: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else { throw OidcError.apiError(code: status, message: OidcError.answer(data)) }
            let claims = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
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
            Constants.redirect_uri: config.redirectUri,
            Constants.client_id: config.clientId,
        ]
        if let verifier = authCode.codeVerifier { form[Constants.code_verifier] = verifier }
        return try await post(to: \.tokenEndpoint, form)
    }

    /// POSTs `form` to one of the provider's endpoints and reads a token from the answer.
    private func post(to endpoint: KeyPath<OpenIdConfiguration, String>, _ form: [String: String]) async throws -> Token {
        guard let httpClient = config.httpClient else { throw OidcError.networkError(message: "HTTP client not found") }
        guard let openId = config.openId else { throw OidcError.unknown(message: "OpenID configuration not found") }
        let request = Request()
        request.url(openId[keyPath: endpoint])
        request.form(formData: form)
        let (data, response) = try await httpClient.sendRequest(request: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw OidcError.apiError(code: status, message: OidcError.answer(data)) }
        do {
            return try JSONDecoder().decode(Token.self, from: data)
        } catch {
            throw OidcError.unknown(message: "The token endpoint's answer is not a token")
        }
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
    func populateRequest(request: Request, pkce: Pkce, responseMode: String = Constants.piflow) -> Request {
        request.url(openId?.authorizationEndpoint ?? "")
        if !responseMode.isEmpty { request.parameter(name: Constants.response_mode, value: responseMode) }
        request.parameter(name: Constants.client_id, value: clientId)
        request.parameter(name: Constants.response_type, value: Constants.code)
        request.parameter(name: Constants.scope, value: scopes.sorted().joined(separator: " "))
        request.parameter(name: Constants.redirect_uri, value: redirectUri)
        request.parameter(name: Constants.code_challenge, value: pkce.codeChallenge)
        request.parameter(name: Constants.code_challenge_method, value: pkce.codeChallengeMethod)
        request.parameter(name: Constants.state, value: state ?? pkce.state)
        let optional: [(String, String?)] = [
            (Constants.acr_values, acrValues), (Constants.display, display), (Constants.login_hint, loginHint),
            (Constants.nonce, nonce), (Constants.prompt, prompt), (Constants.ui_locales, uiLocales),
        ]
        for (name, value) in optional { if let value { request.parameter(name: name, value: value) } }
        for (name, value) in additionalParameters.sorted(by: { $0.key < $1.key }) { request.parameter(name: name, value: value) }
        return request
    }
}

/// One sign-in or refresh at a time per client: tasks that ask while one runs get its result.
actor TokenFlight {
    private var running: Task<Result<Token, OidcError>, Never>?

    func run(_ work: @escaping @Sendable () async -> Result<Token, OidcError>) async -> Result<Token, OidcError> {
        if let running { return await running.value }
        let task = Task { await work() }
        running = task
        let result = await task.value
        running = nil
        return result
    }
}
