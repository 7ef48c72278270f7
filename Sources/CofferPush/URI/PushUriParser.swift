import CofferMFACommons
import CofferMFAEngine
import Foundation

/// Reads and writes push enrolment URIs (`pushauth://push/Issuer:account?r=…&a=…&s=…&c=…&l=…&m=…`,
/// and the push half of `mfauth://`) for Ping's models, on Coffer's one URI reader.
///
/// Ping's rules where they decide what is stored: the issuer parameter (base64url when it
/// decodes to text) wins over the label's and must agree with it without case; the server
/// endpoint is `r` without its query; the shared secret `s` is stored as standard base64 with
/// padding; `pid` and `policies` default to empty. Coffer's reader refuses what Ping lets
/// through: parameters given twice, control or bidirectional characters, endpoints that are
/// not http(s) URLs, a secret that is not base64. Every refusal is a ``PushError``.
public enum PushUriParser {
    /// The credential `uri` describes: a new id, created now, platform PingAM. Nothing is stored.
    public static func parse(_ uri: String) async throws -> PushCredential {
        let reader = try read(uri)
        let parameters = reader.parameters
        var issuerParameter = parameters[UriParser.issuerParam]
        if let raw = issuerParameter { issuerParameter = Base64Text.decodeText(raw) ?? raw }
        // Checked as the label's names are: no control characters, at most 255 bytes.
        if let issuerParameter {
            do { try AuthenticatorURI.checkName(issuerParameter, parameter: "issuer") } catch { throw PushError(error) }
        }
        let labelIssuer = reader.label.issuer
        if let labelIssuer, let issuerParameter, labelIssuer.lowercased() != issuerParameter.lowercased() {
            throw PushError.invalidUri("the issuer parameter does not match the label's issuer")
        }
        let issuer = issuerParameter ?? labelIssuer ?? ""
        do {
            let registration = try reader.url("r")
            _ = try reader.url("a")
            guard let secret = parameters["s"] else { throw PushError.invalidUri("Missing required parameter: s") }
            guard let standard = Base64Text.normalize(secret), !standard.isEmpty else {
                throw PushError.invalidUri("the shared secret 's' is not base64")
            }
            var endpoint = URLComponents(url: registration, resolvingAgainstBaseURL: false)
            endpoint?.query = nil
            endpoint?.fragment = nil
            var color = parameters[UriParser.backgroundColorParam]
            if let value = color, !value.hasPrefix("#") { color = "#" + value }
            return PushCredential(
                userId: try parameters.identifier(UriParser.userIdParam), resourceId: try parameters.identifier("pid") ?? "",
                issuer: issuer, displayIssuer: issuer, accountName: reader.label.accountName ?? "",
                serverEndpoint: endpoint?.string ?? registration.absoluteString, sharedSecret: standard,
                imageURL: try parameters[UriParser.imageUrlParam].map { raw throws(URIReadError) in
                    try AuthenticatorURI.url(raw, parameter: "image").absoluteString
                },
                backgroundColor: color, policies: try parameters.identifier(UriParser.policiesParam) ?? "")
        } catch let error as URIReadError {
            throw PushError(error)
        }
    }

    /// What registration sends the server: `messageId` (`m`), `amlbCookie` (`l`, decoded
    /// when it is base64 of text) and `challenge` (`c`, as standard base64 with padding).
    public static func registrationParameters(_ uri: String) async throws -> [String: String] {
        let parameters = try read(uri).parameters
        guard let messageId = parameters["m"], let cookie = parameters["l"], let challenge = parameters["c"] else {
            throw PushError.invalidUri("Missing required parameter: m, l and c are required")
        }
        guard let standardChallenge = Base64Text.normalize(challenge) else { throw PushError.invalidUri("the challenge 'c' is not base64") }
        return ["messageId": messageId, "amlbCookie": Base64Text.decodeText(cookie) ?? cookie, "challenge": standardChallenge]
    }

    /// `credential` as a `pushauth://` URI, secret included.
    public static func format(_ credential: PushCredential) async throws -> String {
        var components = URLComponents()
        components.scheme = "pushauth"
        components.host = "push"
        let account = AuthenticatorURI.Label.encode(credential.accountName)
        components.percentEncodedPath = "/" + (credential.issuer.isEmpty ? account : AuthenticatorURI.Label.encode(credential.issuer) + ":" + account)
        var items = [
            URLQueryItem(name: "r", value: Data(credential.registrationEndpoint.utf8).base64URLEncodedString()),
            URLQueryItem(name: "a", value: Data(credential.authenticationEndpoint.utf8).base64URLEncodedString()),
            URLQueryItem(name: "s", value: credential.secret.urlSafeEncoding()),
        ]
        if !credential.issuer.isEmpty { items.append(URLQueryItem(name: "issuer", value: credential.issuer)) }
        if let userId = credential.userId { items.append(URLQueryItem(name: "d", value: Base64.encodeBase64(userId))) }
        if !credential.resourceId.isEmpty { items.append(URLQueryItem(name: "pid", value: Base64.encodeBase64(credential.resourceId))) }
        if let image = credential.imageURL { items.append(URLQueryItem(name: "image", value: Base64.encodeBase64(image))) }
        if let color = credential.backgroundColor { items.append(URLQueryItem(name: "b", value: UriParser().formatBackgroundColor(color))) }
        if let policies = credential.policies, !policies.isEmpty { items.append(URLQueryItem(name: "policies", value: Base64.encodeBase64(policies))) }
        components.queryItems = items
        guard let uri = components.string else { throw PushError.uriFormatting("the credential's parts do not form a URI") }
        return uri
    }

    private static func read(_ uri: String) throws -> AuthenticatorURI {
        let trimmed = uri.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw PushError.invalidUri("the URI is empty") }
        let reader: AuthenticatorURI
        do { reader = try AuthenticatorURI(trimmed) } catch { throw PushError(error) }
        guard reader.scheme == "pushauth" || reader.scheme == UriParser.mfauthScheme else {
            throw PushError.invalidUri("Invalid URI scheme: \(reader.scheme), expected: pushauth or \(UriParser.mfauthScheme)")
        }
        return reader
    }
}

extension PushError {
    /// The Push module's error for a URI the reader refused: the parameter and reason, never a value.
    init(_ error: URIReadError) {
        switch error {
        case .missingParameter(let name): self = .invalidUri("Missing required parameter: \(name)")
        default: self = .invalidUri(error.errorDescription ?? "the URI cannot be used")
        }
    }
}
