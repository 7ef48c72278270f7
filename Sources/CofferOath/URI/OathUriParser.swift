import CofferMFACommons
import CofferMFAEngine
import Foundation

/// Reads and writes OATH enrolment URIs for Ping's models, on Coffer's one URI reader.
///
/// Ping's rules (reference §5.3) where they decide what is stored: the issuer parameter and the
/// label's issuer must agree without case; `displayIssuer` keeps the parameter's case; digits
/// 4–8, period 1–300, a counter from 0; the secret kept as given; URIs of at most 4096
/// characters and values of at most 256. Coffer's reader adds what Ping lacks: a parameter
/// given twice, control or bidirectional characters anywhere, and a secret that is not base32
/// are refused at once, with a typed error, rather than at the first code.
enum OathUriParser {
    static func parse(_ text: String, now: Date = Date()) throws -> OathCredential {
        let uri: AuthenticatorURI
        do { uri = try AuthenticatorURI(text, limits: .ping) } catch { throw OathError(error) }
        guard uri.scheme == "otpauth" || uri.scheme == UriParser.mfauthScheme else {
            throw OathError.invalidUri("the scheme is not otpauth or mfauth")
        }
        guard let type = OathType(rawValue: uri.type) else { throw OathError.invalidUri("Unknown OATH type") }
        let parameters = uri.parameters
        for hostile in ["javascript:", "../", "..\\"] where text.lowercased().contains(hostile) {
            throw OathError.invalidUri("it contains '\(hostile)'")
        }
        guard uri.label.issuer != nil || uri.label.accountName != nil else { throw OathError.invalidUri("the label is empty") }

        var issuerParameter = parameters[UriParser.issuerParam]
        if uri.scheme == UriParser.mfauthScheme, let raw = issuerParameter { issuerParameter = Base64Text.decodeText(raw) ?? raw }
        // Checked as the label's names are: no control characters, at most 255 bytes.
        if let issuerParameter {
            do { try AuthenticatorURI.checkName(issuerParameter, parameter: "issuer") } catch { throw OathError(error) }
        }
        if let labelIssuer = uri.label.issuer, let issuerParameter, labelIssuer.lowercased() != issuerParameter.lowercased() {
            throw UriParseError.issuerMismatch(parameterIssuer: issuerParameter, labelIssuer: labelIssuer)
        }
        let secret: String
        let algorithm: OathAlgorithm
        let digits: Int, period: Int, counter: Int
        let userId: String?, resourceId: String?, policies: String?
        do {
            secret = try uri.base32Secret().text
            algorithm = try parameters["algorithm"].map(Self.algorithm) ?? .sha1
            digits = try uri.integer("digits", default: 6, range: 4...8)
            period = try uri.integer("period", default: 30, range: 1...300)
            counter = try uri.integer("counter", default: 0, range: 0...Int.max - 1)
            userId = try parameters.identifier(UriParser.userIdParamOath)
            resourceId = try parameters.identifier("oid")
            policies = try parameters.identifier(UriParser.policiesParam)
        } catch let error as URIReadError {
            throw OathError(error)
        }
        return OathCredential(
            userId: userId, resourceId: resourceId,
            issuer: uri.label.issuer ?? issuerParameter ?? "", displayIssuer: issuerParameter ?? uri.label.issuer ?? "",
            accountName: uri.label.accountName ?? "", oathType: type, oathAlgorithm: algorithm,
            digits: digits, period: period, counter: counter, createdAt: now,
            imageURL: parameters[UriParser.imageUrlParam],
            backgroundColor: UriParser().formatBackgroundColor(parameters[UriParser.backgroundColorParam]),
            policies: policies, secretKey: secret)
    }

    /// The algorithm a URI names; one Ping does not have is refused without quoting the value
    /// (a secret pasted in the wrong place must not reach a message).
    private static func algorithm(_ raw: String) throws -> OathAlgorithm {
        guard let algorithm = OathAlgorithm(rawValue: raw.uppercased()) else {
            let known = ["MD5", "SHA224", "SHA384"].contains(raw.uppercased())
            throw OathError.invalidAlgorithm(known ? raw : "the algorithm parameter names none of SHA1, SHA256 and SHA512")
        }
        return algorithm
    }

    static func format(_ credential: OathCredential) throws -> String {
        var components = URLComponents()
        components.scheme = "otpauth"
        components.host = credential.type
        let account = AuthenticatorURI.Label.encode(credential.accountName)
        components.percentEncodedPath = "/" + (credential.issuer.isEmpty ? account : AuthenticatorURI.Label.encode(credential.issuer) + ":" + account)
        var items = [URLQueryItem(name: "secret", value: credential.secret)]
        if !credential.issuer.isEmpty { items.append(URLQueryItem(name: "issuer", value: credential.displayIssuer)) }
        if credential.oathAlgorithm != .sha1 { items.append(URLQueryItem(name: "algorithm", value: credential.algorithm)) }
        if credential.digits != 6 { items.append(URLQueryItem(name: "digits", value: String(credential.digits))) }
        switch credential.oathType {
        case .totp where credential.period != 30: items.append(URLQueryItem(name: "period", value: String(credential.period)))
        case .hotp: items.append(URLQueryItem(name: "counter", value: String(credential.counter)))
        case .totp: break
        }
        if let userId = credential.userId { items.append(URLQueryItem(name: "uid", value: Base64.encodeBase64(userId))) }
        if let resourceId = credential.resourceId { items.append(URLQueryItem(name: "oid", value: Base64.encodeBase64(resourceId))) }
        if let image = credential.imageURL { items.append(URLQueryItem(name: "image", value: image)) }
        if let color = credential.backgroundColor { items.append(URLQueryItem(name: "b", value: color)) }
        components.queryItems = items
        guard let uri = components.string else { throw OathError.uriFormatting("the credential's parts do not form a URI") }
        return uri
    }
}

extension OathError {
    /// The Oath module's error for a URI the reader refused: the parameter and reason, never a value.
    init(_ error: URIReadError) {
        switch error {
        case .malformed, .unsupportedScheme, .tooLong: self = .invalidUri(error.errorDescription ?? "")
        case .unsupportedType: self = .invalidUri("Unknown OATH type")
        case .missingParameter(let name): self = .missingRequiredParameter(name)
        case .invalidParameter(let name, let reason) where name == "secret": self = .invalidSecret(reason)
        case .invalidParameter(let name, let reason): self = .invalidParameterValue("\(name): \(reason)")
        }
    }
}
