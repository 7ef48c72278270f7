import CofferStorage
import Foundation

/// The one reader of authenticator URIs (`otpauth://`, `pushauth://`, `mfauth://`) Coffer has:
/// it checks the text against hostile input and splits it into scheme, type, label and
/// parameters, and reads single values (numbers, URLs, base32 secrets, base64 identifiers) with
/// one set of rules. It knows no model: CofferAuthenticator's `MechanismURI` maps what it reads
/// onto accounts and mechanisms, CofferOath and CofferPush onto Ping's credentials.
package struct AuthenticatorURI: Sendable {
    /// How much a URI may hold: a bound on the work and on what reaches storage.
    package struct Limits: Sendable {
        /// Characters in the whole URI.
        package var length: Int
        /// Characters in one parameter value.
        package var valueLength: Int
        /// Bytes (UTF-8) in a name: the label's parts, an issuer.
        package var nameLength: Int

        /// Coffer's own limits: room for any URI whose names and values are within their own
        /// limits, even with every character percent-encoded.
        package static let coffer = Limits(length: 16_384, valueLength: 2048, nameLength: 255)
        /// Ping's: a URI of at most 4096 characters and values of at most 256 (Ping's
        /// `OathUriParser`); names keep Coffer's byte limit.
        package static let ping = Limits(length: 4096, valueLength: 256, nameLength: 255)
    }

    /// The scheme, lower-cased (`otpauth`).
    package var scheme: String
    /// The host, lower-cased: the OATH type (`totp`, `hotp`) or `push`.
    package var type: String
    /// The label, percent-decoded.
    package var label: Label
    /// The query parameters.
    package var parameters: Parameters

    /// Reads `text`: at most `limits.length` characters, no control characters, a URI with a
    /// scheme, no parameter twice, every value and name within its limit.
    package init(_ text: String, limits: Limits = .coffer) throws(URIReadError) {
        guard text.count <= limits.length else { throw .tooLong(length: text.count, limit: limits.length) }
        guard !text.unicodeScalars.contains(where: Self.isControl) else {
            throw .malformed(reason: "it contains control characters")
        }
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespaces)),
              let scheme = components.scheme?.lowercased() else {
            throw .malformed(reason: "it is not a URI (expected otpauth://TYPE/LABEL?PARAMETERS)")
        }
        self.scheme = scheme
        type = (components.host ?? "").lowercased()
        parameters = try Parameters(components.queryItems ?? [], valueLength: limits.valueLength)
        label = try Label(components.percentEncodedPath, nameLength: limits.nameLength)
    }

    // MARK: - Values

    /// A whole number in `range`, or `value` when the parameter is absent.
    package func integer(_ name: String, default value: Int, range: ClosedRange<Int>) throws(URIReadError) -> Int {
        guard let raw = parameters[name] else { return value }
        guard let parsed = Int(raw), range.contains(parsed) else {
            throw .invalidParameter(name: name, reason: "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return parsed
    }

    /// The `secret` parameter and the key it decodes to (base32, case, spaces, `-` and padding
    /// ignored). An absent secret, one that is not base32, or one that holds no whole byte is
    /// refused; the message never repeats it.
    package func base32Secret() throws(URIReadError) -> (text: String, key: Data) {
        guard let secret = parameters["secret"] else { throw .missingParameter("secret") }
        let decoded: (bytes: Data, symbols: Int)
        do {
            decoded = try Base32Codec.decodeSecret(secret)
        } catch {
            let position = error.position
            throw .invalidParameter(name: "secret", reason: "the secret is not base32: character \(position + 1) is not a letter A–Z or a digit 2–7")
        }
        guard decoded.symbols > 0 else { throw .invalidParameter(name: "secret", reason: "the secret is empty") }
        // "A" or "J" is valid base32 for no whole byte: no key to make codes with.
        guard !decoded.bytes.isEmpty else { throw .invalidParameter(name: "secret", reason: "it holds no whole byte of key") }
        return (secret, decoded.bytes)
    }

    /// An http(s) URL given as is, percent-encoded once more (`https%3A%2F%2F…`) or
    /// base64-encoded (either alphabet): servers send all three.
    package func url(_ name: String) throws(URIReadError) -> URL {
        guard let raw = parameters[name] else { throw .missingParameter(name) }
        return try Self.url(raw, parameter: name)
    }

    /// `raw` read as an http(s) URL, plain, percent-encoded or base64-encoded.
    package static func url(_ raw: String, parameter: String) throws(URIReadError) -> URL {
        var text = Base64Text.decodeText(raw) ?? raw
        if !text.contains("://"), let decoded = text.removingPercentEncoding { text = decoded }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
              url.host?.isEmpty == false else {
            throw .invalidParameter(name: parameter, reason: "expected an http(s) URL, plain, percent-encoded or base64-encoded")
        }
        return url
    }

    /// Refuses a name with control characters or longer than `limit` bytes of UTF-8 (bytes, not
    /// characters: one character can carry thousands of combining marks).
    package static func checkName(_ name: String, parameter: String, limit: Int = Limits.coffer.nameLength) throws(URIReadError) {
        guard !name.unicodeScalars.contains(where: isControl) else {
            throw .invalidParameter(name: parameter, reason: "it contains control characters")
        }
        guard name.utf8.count <= limit else {
            throw .invalidParameter(name: parameter, reason: "it is longer than \(limit) bytes (UTF-8)")
        }
    }

    /// Control, format and separator characters (`TerminalText.isControl(_:)`), refused in
    /// names so that a URI cannot carry what would rewrite a terminal.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        TerminalText.isControl(scalar)
    }
}
