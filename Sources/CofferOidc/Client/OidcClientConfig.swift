import CofferMFACommons
import CofferOrchestrate
import CofferStorage
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How an ``OidcClient`` reaches its provider and where it keeps the tokens, with Ping's names
/// and defaults: `module(Oidc) { clientId = …; discoveryEndpoint = …; storage { … } }`.
///
/// Without a storage of your own, tokens go to Ping's default: `KeychainStorage<Token>` under
/// the account `ACCESS_TOKEN_STORAGE`, sealed by `SecuredKeyEncryptor` (or not sealed when no key
/// store is available), with a memory copy. On a machine without a usable keyring (a server, a
/// container, an SSH session) they go to an encrypted file, `com.pingidentity.sdk.v1.tokens`
/// (`PlatformDefaultStorage`). It is made when first used. ``storage(_:)`` takes the spec's
/// Android options instead: `storage { $0.fileName = "myOidcTokens" }`.
public final class OidcClientConfig: Sendable {
    // Every setting is kept in `values`, read and written only under its lock; the class adds
    // no other state.
    private let values = Mutex(Settings())

    /// The settings, as one value behind the lock.
    struct Settings: Sendable {
        var openId: OpenIdConfiguration?
        var refreshThreshold: Int64 = 0
        var agent: (any AgentDelegateProtocol)?
        var logger: any CofferMFACommons.Logger = LogManager.logger
        var storage: StorageDelegate<Token>?
        var discoveryEndpoint = ""
        var clientId = ""
        var scopes = Set<String>()
        var redirectUri = ""
        var loginHint: String?
        var state: String?
        var nonce: String?
        var display: String?
        var prompt: String?
        var uiLocales: String?
        var acrValues: String?
        var additionalParameters: [String: String] = [:]
        var httpClient: HttpClient?
        var clientAuthentication = ClientAuthentication.none
        var issuer: String?
        var requiresIdTokenValidation = false
        /// The provider's signing keys, once fetched (shared with clones).
        var providerKeys = ProviderKeys()
    }

    /// A configuration with Ping's defaults.
    public init() {}

    private func get<V: Sendable>(_ path: KeyPath<Settings, V>) -> V { values.withLock { $0[keyPath: path] } }
    private func set<V: Sendable>(_ path: WritableKeyPath<Settings, V>, _ value: V) { values.withLock { $0[keyPath: path] = value } }

    /// The provider's discovery document, once read (``oidcInitialize()``).
    public var openId: OpenIdConfiguration? { get { get(\.openId) } set { set(\.openId, newValue) } }
    /// How many seconds before its expiry an access token is refreshed (0: at expiry).
    public var refreshThreshold: Int64 { get { get(\.refreshThreshold) } set { set(\.refreshThreshold, newValue) } }
    /// How a code is obtained (``updateAgent(_:config:)``).
    var agent: (any AgentDelegateProtocol)? { get { get(\.agent) } set { set(\.agent, newValue) } }
    /// Where the module logs (never a token or a code).
    public var logger: any CofferMFACommons.Logger { get { get(\.logger) } set { set(\.logger, newValue) } }
    /// Where the tokens are kept.
    public var storage: StorageDelegate<Token> {
        get {
            if let storage = get(\.storage) { return storage }
            // Made outside the lock (finding a key store can take seconds); the first one kept wins.
            let made: StorageDelegate<Token> = PlatformDefaultStorage.make(account: Self.defaultAccount, fileName: Self.defaultFileName)
            return values.withLock { values in
                if let storage = values.storage { return storage }
                values.storage = made
                return made
            }
        }
        set { set(\.storage, newValue) }
    }
    /// Ping's keychain account for tokens: `ACCESS_TOKEN_STORAGE`.
    public static let defaultAccount = "ACCESS_TOKEN_STORAGE"
    /// The spec's file name for tokens: `com.pingidentity.sdk.v1.tokens`.
    public static let defaultFileName = "com.pingidentity.sdk.v1.tokens"

    /// Keeps the tokens in an `EncryptedFileStorage` set up with the spec's Android options,
    /// as `module(Oidc) { storage { fileName = …; keyAlias = …; strongBoxPreferred = …;
    /// cacheStrategy = … } }` does:
    ///
    /// ```swift
    /// config.storage { file in
    ///     file.fileName = "myOidcTokens"
    ///     file.keyAlias = "com.example.v1.KEYS"
    ///     file.strongBoxPreferred = true
    ///     file.cacheStrategy = .cacheOnFailure
    /// }
    /// ```
    ///
    /// The file name defaults to `com.pingidentity.sdk.v1.tokens` and the key alias to the file
    /// name. `strongBoxPreferred` keeps the key in the OS keyring when it is usable the first
    /// time (else in a 0600 key file), as `KeyStoreSelection` records it.
    public func storage(_ configure: (inout FileStorageConfiguration) -> Void) {
        storage = EncryptedFileStorage<Token> { file in
            file.fileName = Self.defaultFileName
            configure(&file)
        }
    }

    /// The provider's discovery document URL (`…/.well-known/openid-configuration`).
    public var discoveryEndpoint: String { get { get(\.discoveryEndpoint) } set { set(\.discoveryEndpoint, newValue) } }
    /// The client's id at the provider.
    public var clientId: String { get { get(\.clientId) } set { set(\.clientId, newValue) } }
    /// The scopes asked for (`openid`, `profile`, …).
    public var scopes: Set<String> { get { get(\.scopes) } set { set(\.scopes, newValue) } }
    /// Where the provider sends the browser back with the code.
    public var redirectUri: String { get { get(\.redirectUri) } set { set(\.redirectUri, newValue) } }
    /// `login_hint`.
    public var loginHint: String? { get { get(\.loginHint) } set { set(\.loginHint, newValue) } }
    /// `state`; a fresh random one is sent when it is `nil`.
    public var state: String? { get { get(\.state) } set { set(\.state, newValue) } }
    /// `nonce`.
    public var nonce: String? { get { get(\.nonce) } set { set(\.nonce, newValue) } }
    /// `display`.
    public var display: String? { get { get(\.display) } set { set(\.display, newValue) } }
    /// `prompt`.
    public var prompt: String? { get { get(\.prompt) } set { set(\.prompt, newValue) } }
    /// `ui_locales`.
    public var uiLocales: String? { get { get(\.uiLocales) } set { set(\.uiLocales, newValue) } }
    /// `acr_values`.
    public var acrValues: String? { get { get(\.acrValues) } set { set(\.acrValues, newValue) } }
    /// More parameters for the authorization request.
    public var additionalParameters: [String: String] { get { get(\.additionalParameters) } set { set(\.additionalParameters, newValue) } }
    /// The HTTP client; one is made by ``oidcInitialize()`` when there is none.
    public var httpClient: HttpClient? { get { get(\.httpClient) } set { set(\.httpClient, newValue) } }

    /// How the client proves who it is: ``ClientAuthentication/none`` (a public client, Ping's
    /// only kind) unless it was given a secret.
    public var clientAuthentication: ClientAuthentication {
        get { get(\.clientAuthentication) }
        set { set(\.clientAuthentication, newValue) }
    }

    /// The issuer the discovery document must name (OpenID Connect Discovery §4.3); `nil`:
    /// whichever it names (Ping's behaviour). Set it whenever you know it: a document that names
    /// another issuer is then refused, not trusted.
    public var issuer: String? { get { self.get(\.issuer) } set { set(\.issuer, newValue) } }

    /// Whether an ID token must be checked even when the discovery document names no `jwks_uri`
    /// (then it is refused, since it cannot be checked). `false` by default, for Ping's mock
    /// provider, which publishes no keys; every real provider does.
    public var requiresIdTokenValidation: Bool {
        get { self.get(\.requiresIdTokenValidation) }
        set { set(\.requiresIdTokenValidation, newValue) }
    }

    /// What ``OidcClient/token()``'s common path needs, read under the lock once: the storage
    /// (if made), whether the discovery document is known, the refresh threshold.
    var validTokenPath: (storage: StorageDelegate<Token>?, discovered: Bool, threshold: Int64) {
        values.withLock { ($0.storage, $0.openId != nil, $0.refreshThreshold) }
    }

    /// The provider's signing keys.
    var providerKeys: ProviderKeys { self.get(\.providerKeys) }

    /// Adds a scope.
    public func scope(_ scope: String) {
        values.withLock { _ = $0.scopes.insert(scope) }
    }

    /// Uses `agent` to obtain codes; `config` may adjust the agent's settings (a class) before use.
    public func updateAgent<T: Sendable>(_ agent: any Agent<T>, config: (T) -> Void = { _ in }) {
        let made = agent.config()()
        config(made)
        self.agent = AgentDelegate<T>(agent: agent, agentConfig: made, oidcClientConfig: self)
    }

    /// Makes the HTTP client if there is none and reads the discovery document once.
    ///
    /// - Throws: ``OidcError/apiError(code:message:)`` when the provider answers with an error.
    public func oidcInitialize() async throws {
        if httpClient == nil { httpClient = HttpClient() }
        guard openId == nil else { return }
        openId = try await discover()
    }

    private func discover() async throws -> OpenIdConfiguration? {
        guard URL(string: discoveryEndpoint) != nil, let httpClient else {
            logger.e("Invalid Discovery URL", error: nil)
            return nil
        }
        guard Self.isSafe(discoveryEndpoint) else {
            throw OidcError.unknown(message: "The discovery endpoint must be an https URL (http only on this machine's loopback) without a user name or password")
        }
        let request = Request()
        request.url(discoveryEndpoint)
        let (data, response) = try await httpClient.sendRequest(request: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 500
        guard status == 200 else { throw OidcError.apiError(code: status, message: OidcError.answer(data)) }
        let document: OpenIdConfiguration
        do {
            document = try JSONDecoder().decode(OpenIdConfiguration.self, from: data)
        } catch {
            throw OidcError.unknown(cause: error, message: "The discovery document cannot be read")
        }
        if let issuer, Self.trimmed(document.issuer ?? "") != Self.trimmed(issuer) {
            throw OidcError.unknown(message: "The discovery document names another issuer than the one configured; it was not used (OpenID Connect Discovery §4.3)")
        }
        return document
    }

    /// `text` without one trailing `/`.
    private static func trimmed(_ text: String) -> String { text.hasSuffix("/") ? String(text.dropLast()) : text }

    /// Whether `text` is an https URL, or http on this machine's loopback (127.0.0.1, ::1), with
    /// a host and no user name or password: where a code, a verifier or a token may go.
    static func isSafe(_ text: String) -> Bool {
        guard let url = URL(string: text), let host = url.host?.lowercased(), !host.isEmpty,
              url.user == nil, url.password == nil else { return false }
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http": return ["127.0.0.1", "::1", "[::1]"].contains(host)
        default: return false
        }
    }

    /// A configuration with the same settings.
    public func clone() -> OidcClientConfig {
        let cloned = OidcClientConfig()
        cloned.update(with: self)
        return cloned
    }

    /// Takes every setting of `other`, its storage too (made first if it was not yet), so both
    /// share one storage and one memory copy of the session.
    func update(with other: OidcClientConfig) {
        _ = other.storage
        let copied = other.values.withLock { $0 }
        values.withLock { $0 = copied }
    }
}
