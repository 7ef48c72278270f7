import CofferMFACommons
import CofferOrchestrate
import CofferStorage
import Foundation
import Logging

/// Named OpenID Connect sessions in a directory, each sealed in two files (its settings and its
/// tokens) under a key kept as Coffer's key stores keep one: the OS keyring when there is one,
/// else a 0600 key file (`KeyStoreSelection.recorded`). What `coffer login`, `token`, `logout`
/// and `sessions` do, for any program that wants the same.
///
/// ```swift
/// let sessions = try OidcSessions(directory: folder)
/// try await sessions.signIn("work", settings: OidcSessionSettings(
///     issuer: "https://id.example.com", clientId: "cli", scopes: ["openid", "offline_access"]))
/// let token = try await sessions.token("work", minValid: 60)
/// ```
///
/// A refresh runs in the session file's exclusive section (`ExclusiveSection`): processes that
/// ask for a token at once make one refresh, and the others read its result.
public struct OidcSessions: Sendable {
    /// The directory the sessions are in.
    public let directory: URL
    private let keyStore: any KeyStore
    private let httpClient: HttpClient?

    /// The key alias the sessions are sealed under.
    public static let keyAlias = "org.coffer.sessions"

    /// The sessions in `directory`, sealed under `keyStore` (default: the keyring when it can be
    /// used, else a key file in `directory/keys`, the choice recorded in `directory/keystore`).
    public init(directory: URL, keyStore: (any KeyStore)? = nil, httpClient: HttpClient? = nil) throws {
        self.directory = directory
        try FileTrust.prepareDirectory(directory)
        self.keyStore = try keyStore ?? KeyStoreSelection.recorded(in: directory, logger: Logger(label: "org.coffer.oidc.sessions"))
        self.httpClient = httpClient
    }

    /// Why `name` cannot name a session, or `nil` when it can: letters, digits, `.`, `-` and `_`,
    /// not first `.`, at most 100 bytes.
    public static func problem(with name: String) -> String? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-".unicodeScalars)
        guard !name.isEmpty, !name.hasPrefix("."), name.utf8.count <= 100, name.unicodeScalars.allSatisfy(allowed.contains) else {
            return "'\(TerminalText.escaped(String(name.prefix(100))))' cannot name a session: use letters, digits, '.', '-' and '_' (not first '.'), at most 100"
        }
        return nil
    }

    private func checked(_ name: String) throws -> String {
        if let problem = Self.problem(with: name) { throw OidcSessionError.badName(problem) }
        return name
    }

    private func settingsStorage(_ name: String) -> EncryptedFileStorage<OidcSessionSettings> {
        EncryptedFileStorage(fileName: name + ".session", keyAlias: Self.keyAlias, directory: directory, keyStore: keyStore)
    }

    /// The storage of `name`'s tokens.
    public func tokenStorage(_ name: String) throws -> EncryptedFileStorage<Token> {
        EncryptedFileStorage(fileName: try checked(name) + ".token", keyAlias: Self.keyAlias, directory: directory, keyStore: keyStore)
    }

    /// The settings of `name`, or `nil` when there is no such session.
    public func settings(_ name: String) async throws -> OidcSessionSettings? {
        try await settingsStorage(try checked(name)).get()
    }

    /// A client configuration for `name` with `settings`, its tokens in the session's file.
    public func config(_ name: String, settings: OidcSessionSettings) throws -> OidcClientConfig {
        let config = OidcClientConfig()
        config.discoveryEndpoint = settings.discoveryEndpoint
        config.clientId = settings.clientId
        config.scopes = Set(settings.scopes)
        config.clientAuthentication = settings.clientAuthentication
        // The discovery document must name the issuer the user gave, and every ID token is
        // checked: a session is only ever the provider's the user named.
        config.issuer = settings.issuerIdentifier
        config.requiresIdTokenValidation = true
        config.storage = try tokenStorage(name)
        if let httpClient { config.httpClient = httpClient }
        return config
    }

    /// Signs in as `settings` say, with `agent` (the browser through a `LoopbackAgent`), or with
    /// the device grant when `device` is given (it is told the codes to show); stores the
    /// session under `name`, replacing one of that name only once the new one is stored.
    @discardableResult
    public func signIn(
        _ name: String, settings: OidcSessionSettings, agent: LoopbackAgent = LoopbackAgent(),
        device: (@Sendable (DeviceAuthorizationResponse) -> Void)? = nil
    ) async throws -> Token {
        let name = try checked(name)
        if let problem = OidcSessionSettings.issuerProblem(settings.issuer) { throw OidcSessionError.badIssuer(problem) }
        // The new session is made in a configuration of its own, then stored over the old.
        let fresh = OidcClientConfig()
        let target = try config(name, settings: settings)
        fresh.update(with: target)
        fresh.storage = StorageDelegate(delegate: MemoryStorage<Token>())
        let token: Token
        if let device {
            token = try await Self.deviceSignIn(fresh, show: device)
        } else {
            fresh.updateAgent(agent)
            token = try await OidcClient(config: fresh).token().get()
        }
        // Both files change in the session's section: a refresh or a logout under way finishes
        // first, and what this replaces is read only now (a refresh may have rotated it since).
        let settingsStorage = settingsStorage(name)
        let replaced: (OidcClientConfig, Token)? = try await target.storage.withExclusiveSection {
            let old = try await settingsStorage.get().flatMap { try? self.config(name, settings: $0) }
            let previous = try await target.storage.get()
            try await target.storage.save(item: token)
            try await settingsStorage.save(item: settings)
            return old.flatMap { old in previous.map { (old, $0) } }
        }
        // The session this one replaces is ended at its provider.
        if let (old, previous) = replaced { await OidcClient(config: old).revokeAtProvider(previous) }
        return token
    }

    private static func deviceSignIn(_ config: OidcClientConfig, show: @escaping @Sendable (DeviceAuthorizationResponse) -> Void) async throws -> Token {
        for try await status in try await OidcDeviceClient(config: config).deviceAuthorization() {
            switch status {
            case .started(let codes): show(codes)
            case .polling: break
            case .success: if let token = try await config.storage.get() { return token }
            case .accessDenied: throw OidcSessionError.refused
            case .expired: throw OidcSessionError.expired
            }
        }
        throw OidcSessionError.expired
    }

    /// A valid access token of `name`: the stored one when it is valid for `minValid` seconds
    /// more, else refreshed first (one refresh for every process asking at once).
    ///
    /// A stored token that is valid is returned without a word to the provider (not even its
    /// discovery document), as an agent's cached token is: a provider that is down, or a
    /// machine offline, does not stop a token that still works.
    ///
    /// - Throws: ``OidcSessionError/notFound(_:)``; ``OidcSessionError/signInAgain(_:reason:)``
    ///   when the provider refused the refresh (the session is kept; nothing is deleted).
    public func token(_ name: String, minValid: Int64 = 0) async throws -> Token {
        for _ in 0..<2 {
            guard let settings = try await settings(name) else { throw OidcSessionError.notFound(name) }
            let config = try config(name, settings: settings)
            config.refreshThreshold = minValid
            config.updateAgent(DefaultAgent())
            // Valid, and still this session's: read with the settings in the session's section,
            // where a sign-in replaces both, so it is never a replaced session's. No network.
            let stored = try await config.storage.withExclusiveSection {
                let token = try await config.storage.get()
                return try await self.settings(name) == settings ? token : nil
            }
            if let stored, !stored.isExpired(threshold: minValid) { return stored }
            let result = await OidcClient(config: config).token()
            // Signed in again meanwhile (other settings): ask the new session instead.
            if try await self.settings(name) != settings { continue }
            switch result {
            case .success(let token): return token
            case .failure(.authorizeError(_, let message)) where message == "No AuthCode is available.":
                let reason = stored == nil ? "its tokens are gone" : stored?.refreshToken == nil
                    ? "it expired and has no refresh token" : "the provider refused to refresh it"
                throw OidcSessionError.signInAgain(name, reason: reason)
            case .failure(let error): throw error
            }
        }
        throw OidcSessionError.signInAgain(name, reason: "it was signed in again twice while this waited")
    }

    /// Revokes `name`'s tokens at the provider, then removes the session; `false` when the
    /// provider could not be told (the session is removed all the same).
    @discardableResult
    public func logout(_ name: String) async throws -> Bool {
        let tokens = try tokenStorage(name)
        let settingsStorage = settingsStorage(name)
        // In the session's section: a refresh under way finishes first, and the tokens it
        // stored are the ones revoked, instead of being written back after the delete.
        let removed: (OidcSessionSettings?, Token?) = try await tokens.withExclusiveSection {
            let settings = try await settingsStorage.get()
            let token = try await tokens.get()
            guard settings != nil || token != nil else { return (nil, nil) }
            try await tokens.delete()
            try await settingsStorage.delete()
            return (settings, token)
        }
        switch removed {
        case (nil, nil): throw OidcSessionError.notFound(name)
        case (let settings?, let token?): return await OidcClient(config: try config(name, settings: settings)).revokeAtProvider(token)
        case (_, nil): return true
        case (nil, _?): return false   // tokens without their settings (a sign-in killed halfway): removed, not revocable
        }
    }

    /// The names of the stored sessions, sorted.
    public func names() throws -> [String] {
        guard try FileTrust.checkExistingDirectory(directory.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".session") && !$0.hasPrefix(".") }
            .map { String($0.dropLast(".session".count)) }
            .filter { Self.problem(with: $0) == nil }
            .sorted()
    }

    /// Why the session `name` can no longer give a token without signing in again, or `nil`
    /// when it can (as far as can be told without asking the provider): its files cannot be
    /// read, its tokens are gone, or it has expired with no refresh token.
    public func refreshProblem(_ name: String) async -> String? {
        do {
            guard try await settings(name) != nil else { return "its settings are gone" }
            guard let token = try await tokenStorage(name).get() else { return "its tokens are gone" }
            if token.refreshToken == nil, token.hasKnownExpiry, token.isExpired { return "it has expired and has no refresh token" }
            return nil
        } catch {
            return "its files cannot be read: " + ((error as? LocalizedError)?.errorDescription ?? "\(error)")
        }
    }

    /// How the user `token` signed in is called, for a person: the ID token's `email`, else
    /// `preferred_username`, else `sub` (read from a token already accepted, without checks).
    public static func userName(of token: Token) -> String? {
        guard let claims = token.idToken.flatMap(IdTokenValidator.unverifiedClaims(of:)) else { return nil }
        return (claims["email"] as? String) ?? (claims["preferred_username"] as? String) ?? (claims["sub"] as? String)
    }

    /// What can be said about `name` without a token.
    public func summary(_ name: String) async throws -> OidcSessionSummary {
        guard let settings = try await settings(name) else { throw OidcSessionError.notFound(name) }
        let token = try await tokenStorage(name).get()
        return OidcSessionSummary(
            name: name, issuer: settings.issuer, clientId: settings.clientId,
            subject: token?.idToken.flatMap(IdTokenValidator.subject(of:)),
            scopes: token?.scope.map { $0.split(separator: " ").map(String.init) } ?? settings.scopes,
            expiresAt: token.flatMap { $0.hasKnownExpiry ? $0.expiresAt : nil },
            canRefresh: token?.refreshToken != nil)
    }
}

/// Why a named session could not be used.
public enum OidcSessionError: Error, Sendable, Equatable, LocalizedError {
    /// No session has this name.
    case notFound(String)
    /// The name cannot name a session.
    case badName(String)
    /// The issuer URL cannot be used.
    case badIssuer(String)
    /// The session cannot be refreshed: sign in again (it is kept until then).
    case signInAgain(String, reason: String)
    /// The user refused the device sign-in.
    case refused
    /// The device codes expired before the user approved.
    case expired

    /// What happened and what to do.
    public var errorDescription: String? {
        switch self {
        case .notFound(let name): "There is no session '\(name)' (coffer sessions lists them; coffer login \(name) makes it)"
        case .badName(let problem): problem
        case .badIssuer(let problem): problem
        case let .signInAgain(name, reason): "The session '\(name)' can no longer be used: \(reason). Sign in again: coffer login \(name)"
        case .refused: "The sign-in was refused at the provider"
        case .expired: "The sign-in codes expired before the sign-in was approved; start again"
        }
    }
}
