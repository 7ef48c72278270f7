import CofferOrchestrate
import CofferStorage
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The provider's endpoints, as every flow reaches them: checked before use, posted to with the
/// client's credentials, answered errors reduced to what OAuth says.
extension OidcClientConfig {
    /// One of the discovery document's endpoints: present, and https (http only on this
    /// machine's loopback), so no code, verifier or token goes anywhere else.
    func endpoint(_ path: KeyPath<OpenIdConfiguration, String?>, named name: String) throws -> String {
        guard let openId else { throw OidcError.unknown(message: "OpenID configuration not found") }
        let text = openId[keyPath: path] ?? ""
        guard !text.isEmpty, let url = URL(string: text), let host = url.host, !host.isEmpty else {
            throw OidcError.unknown(message: "The provider's discovery document names no \(name)")
        }
        guard Self.isSafe(text) else {
            throw OidcError.unknown(message: "The provider's \(name) is not https; Coffer sends nothing over plain http but to this machine's loopback")
        }
        return text
    }

    /// POSTs `form` (with `client_id` and the client's credentials added) to `url`; the
    /// answer's body and status.
    func postForm(to url: String, _ form: [String: String]) async throws -> (Data, Int) {
        guard let httpClient else { throw OidcError.networkError(message: "HTTP client not found") }
        let request = Request()
        request.url(url)
        var fields = form
        fields[OidcClient.Constants.client_id] = clientId
        clientAuthentication.apply(to: request, clientId: clientId, form: &fields)
        request.form(formData: fields)
        let (data, response) = try await httpClient.sendRequest(request: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }

    /// POSTs `form` to the token endpoint and reads a token from the answer.
    ///
    /// - Throws: ``OidcError/apiError(code:message:)`` with OAuth's error when the provider
    ///   refuses (only its `error` and `error_description`).
    func postToTokenEndpoint(_ form: [String: String]) async throws -> Token {
        let (data, status) = try await postForm(to: try endpoint(\.tokenEndpointIfPresent, named: "token_endpoint"), form)
        guard status == 200 else { throw OidcError.apiError(code: status, message: OidcError.answer(data)) }
        return try Self.token(from: data)
    }

    /// The token in a token endpoint's successful answer.
    static func token(from data: Data) throws -> Token {
        let token: Token
        do {
            token = try JSONDecoder().decode(Token.self, from: data)
        } catch {
            throw OidcError.unknown(message: "The token endpoint's answer is not a token")
        }
        // Printed by `coffer token` into terminals and headers: control characters (terminal
        // escapes, a CR LF that would split a header) are never part of a real token.
        for (field, value) in [("access_token", token.accessToken), ("refresh_token", token.refreshToken ?? ""), ("token_type", token.tokenType ?? "")]
        where value.unicodeScalars.contains(where: TerminalText.isControl) {
            throw OidcError.unknown(message: "The token endpoint's \(field) holds control characters; it was not stored")
        }
        return token
    }
}

extension OpenIdConfiguration {
    /// Ping's required endpoints, as optionals for ``OidcClientConfig/endpoint(_:named:)``.
    var tokenEndpointIfPresent: String? { tokenEndpoint }
    var revocationEndpointIfPresent: String? { revocationEndpoint }
    var userinfoEndpointIfPresent: String? { userinfoEndpoint }
    var authorizationEndpointIfPresent: String? { authorizationEndpoint }
    var endSessionEndpointIfPresent: String? { endSessionEndpoint }
}
