import Foundation

/// Parses the URIs issuers show as QR codes into an ``Account`` and its ``Mechanism``s.
///
/// - `otpauth://totp/Issuer:alice?secret=BASE32&issuer=Issuer&algorithm=SHA1&digits=6&period=30`
///   and `otpauth://hotp/…&counter=0`: one OATH mechanism.
/// - `pushauth://push/Issuer:alice?r=…&a=…&s=…&c=…&l=…&m=…`: one push mechanism. `r` and `a`
///   (registration and authentication endpoints), `l` (load-balancer cookie), `image` and
///   `issuer` are base64 or base64url; `s` (shared secret) and `c` (challenge) are base64.
/// - `mfauth://totp/Issuer:alice?…`: both, a push mechanism and an OATH one, from one URI.
///
/// Rules, so behaviour is predictable:
/// - The label is `issuer:account` (percent-encoded; a space after `:` is ignored) or just
///   `account`. When the `issuer` parameter is present it wins over the label's issuer, as in
///   common authenticator apps; the label's issuer is then used as ``Account/displayIssuer`` if
///   they differ.
/// - Digits 6–8, period 1–86400 seconds, algorithm SHA1/SHA256/SHA384/SHA512/MD5, a counter that
///   fits in 64 bits, a secret that is valid base32 (OATH) or base64 (push).
/// - Hostile input is refused: URIs over 16,384 characters, values over 2048, control characters
///   anywhere, names over 255 bytes of UTF-8, endpoints that are not http(s) URLs.
public enum MechanismURI {
    /// What a URI describes.
    public struct Parsed: Sendable, Equatable {
        /// The account.
        public var account: Account
        /// Its mechanisms: one, or two for `mfauth` (push first, then OATH).
        public var mechanisms: [Mechanism]
    }

    /// An `otpauth://` URI for the given parts (so typed-in accounts and imported vault entries
    /// go through the same validation as scanned ones). Parameters left `nil` are omitted.
    public static func otpauth(
        type: MechanismType, issuer: String, accountName: String, secret: String, algorithm: String? = nil,
        digits: Int? = nil, period: Int? = nil, counter: UInt64? = nil
    ) -> String {
        var components = URLComponents()
        components.scheme = "otpauth"
        components.host = type.rawValue
        // Each part percent-encoded down to unreserved characters, so a ':' inside the issuer or
        // the account name can never be taken for the separator.
        components.percentEncodedPath = "/" + Label.encode(issuer) + ":" + Label.encode(accountName)
        components.queryItems = [URLQueryItem(name: "secret", value: secret), URLQueryItem(name: "issuer", value: issuer)]
            + [algorithm.map { URLQueryItem(name: "algorithm", value: $0) },
               digits.map { URLQueryItem(name: "digits", value: String($0)) },
               period.map { URLQueryItem(name: "period", value: String($0)) },
               counter.map { URLQueryItem(name: "counter", value: String($0)) }].compactMap { $0 }
        return components.string ?? ""
    }

    /// Room for any URI whose names and values are within their own limits, even with every
    /// character percent-encoded (as ``otpauth(type:issuer:accountName:secret:algorithm:digits:period:counter:)``
    /// writes non-ASCII names); it bounds the work, the other limits bound the content.
    static let maximumLength = 16_384
    static let maximumValueLength = 2048
    static let maximumNameLength = 255

    /// Parses `text`. `now` becomes the ``Account/timeAdded`` and ``Mechanism/timeAdded``.
    public static func parse(_ text: String, now: Date = Date()) throws(URIParseError) -> Parsed {
        guard text.count <= maximumLength else { throw .tooLong(length: text.count, limit: maximumLength) }
        guard !text.unicodeScalars.contains(where: isControl) else {
            throw .malformed(reason: "it contains control characters")
        }
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespaces)),
              let scheme = components.scheme?.lowercased() else {
            throw .malformed(reason: "it is not a URI (expected otpauth://TYPE/LABEL?PARAMETERS)")
        }
        let type = (components.host ?? "").lowercased()
        let parameters = try Parameters(components.queryItems ?? [])
        let label = try Label(components.percentEncodedPath)

        switch scheme {
        case "otpauth":
            guard let oathType = MechanismType(rawValue: type), oathType != .push else { throw .unsupportedType(type) }
            let account = try makeAccount(label, parameters, issuerIsBase64: false, now: now)
            return Parsed(account: account, mechanisms: [try oath(oathType, account, parameters, now: now)])
        case "pushauth":
            guard type == "push" else { throw .unsupportedType(type) }
            let account = try makeAccount(label, parameters, issuerIsBase64: true, now: now)
            return Parsed(account: account, mechanisms: [try push(account, parameters, now: now)])
        case "mfauth":
            guard let oathType = MechanismType(rawValue: type), oathType != .push else { throw .unsupportedType(type) }
            let account = try makeAccount(label, parameters, issuerIsBase64: true, now: now)
            return Parsed(account: account, mechanisms: [
                try push(account, parameters, now: now), try oath(oathType, account, parameters, now: now),
            ])
        default:
            throw .unsupportedScheme(scheme)
        }
    }

    // MARK: - Parts

    private static func makeAccount(_ label: Label, _ parameters: Parameters, issuerIsBase64: Bool, now: Date) throws(URIParseError) -> Account {
        var issuer = label.issuer
        var displayIssuer: String?
        if let raw = parameters["issuer"] {
            let fromParameter = issuerIsBase64 ? (Base64Text.decodeText(raw) ?? raw) : raw
            try checkName(fromParameter, parameter: "issuer")
            if let labelIssuer = label.issuer, labelIssuer != fromParameter { displayIssuer = labelIssuer }
            issuer = fromParameter
        }
        guard let issuer, !issuer.isEmpty else {
            throw .missingParameter("issuer")
        }
        var backgroundColor: String?
        if let color = parameters["b"] {
            let hex = color.hasPrefix("#") ? String(color.dropFirst()) : color
            guard hex.count == 6, hex.allSatisfy(\.isHexDigit) else {
                throw .invalidParameter(name: "b", reason: "expected a colour as six hexadecimal digits")
            }
            backgroundColor = "#" + hex.lowercased()
        }
        var policies: String?
        if let encoded = parameters["policies"] {
            guard let json = Base64Text.decodeText(encoded),
                  (try? JSONSerialization.jsonObject(with: Data(json.utf8))) != nil else {
                throw .invalidParameter(name: "policies", reason: "expected base64-encoded JSON")
            }
            policies = json
        }
        return Account(
            issuer: issuer, accountName: label.accountName, displayIssuer: displayIssuer,
            imageURL: try parameters["image"].map { raw throws(URIParseError) in try url(raw, parameter: "image", base64: issuerIsBase64).absoluteString },
            backgroundColor: backgroundColor, timeAdded: now, policies: policies)
    }

    private static func oath(_ type: MechanismType, _ account: Account, _ parameters: Parameters, now: Date) throws(URIParseError) -> Mechanism {
        guard let secret = parameters["secret"] else { throw .missingParameter("secret") }
        let key: Data
        do {
            key = try Base32.decode(secret)
        } catch {
            throw .invalidParameter(name: "secret", reason: error.errorDescription ?? "not base32")
        }
        // "A" or "J" is valid base32 for no whole byte: no key to make codes with.
        guard !key.isEmpty else { throw .invalidParameter(name: "secret", reason: "it holds no whole byte of key") }
        var algorithm = OathAlgorithm.sha1
        if let raw = parameters["algorithm"] {
            guard let parsed = OathAlgorithm(uriValue: raw) else {
                throw .invalidParameter(name: "algorithm", reason: "expected SHA1, SHA256, SHA384, SHA512 or MD5")
            }
            algorithm = parsed
        }
        let digits = try integer(parameters["digits"], name: "digits", default: 6, range: 6...8)
        let period = try integer(parameters["period"], name: "period", default: 30, range: 1...86_400)
        var counter: UInt64 = 0
        if type == .hotp {
            guard let raw = parameters["counter"] else { throw .missingParameter("counter") }
            // At most Int64.max - 1: the counter must be able to move on (it is checked, never
            // wraps), and fit SQLite's and Java's 64-bit signed integers.
            guard let value = UInt64(raw), value < UInt64(Int64.max) else {
                throw .invalidParameter(name: "counter", reason: "expected a whole number from 0 to \(Int64.max - 1)")
            }
            counter = value
        }
        return Mechanism(
            issuer: account.issuer, accountName: account.accountName, type: type,
            secret: secret.uppercased().filter { $0 != " " && $0 != "-" && $0 != "=" },
            algorithm: algorithm, digits: digits, period: period, counter: counter,
            uid: parameters["uid"], timeAdded: now)
    }

    private static func push(_ account: Account, _ parameters: Parameters, now: Date) throws(URIParseError) -> Mechanism {
        func required(_ name: String) throws(URIParseError) -> String {
            guard let value = parameters[name], !value.isEmpty else { throw .missingParameter(name) }
            return value
        }
        let registration = try url(try required("r"), parameter: "r", base64: true)
        let authentication = try url(try required("a"), parameter: "a", base64: true)
        let secret = try required("s")
        guard let secretBytes = Base64Text.decode(secret), secretBytes.count >= 16 else {
            throw .invalidParameter(name: "s", reason: "expected a base64 shared secret of at least 16 bytes")
        }
        let challenge = try required("c")
        guard Base64Text.decode(challenge) != nil else {
            throw .invalidParameter(name: "c", reason: "expected a base64 challenge")
        }
        let messageId = try required("m")
        try checkName(messageId, parameter: "m")
        if let cookie = parameters["l"], Base64Text.decodeText(cookie) == nil {
            throw .invalidParameter(name: "l", reason: "expected a base64 load-balancer cookie")
        }
        return Mechanism(
            issuer: account.issuer, accountName: account.accountName, type: .push,
            secret: Data(secretBytes).base64EncodedString(), uid: parameters["uid"], resourceId: parameters["d"],
            timeAdded: now, registrationEndpoint: registration, authenticationEndpoint: authentication,
            messageId: messageId, challenge: challenge)
    }

    // MARK: - Values

    private static func integer(_ raw: String?, name: String, default value: Int, range: ClosedRange<Int>) throws(URIParseError) -> Int {
        guard let raw else { return value }
        guard let parsed = Int(raw), range.contains(parsed) else {
            throw .invalidParameter(name: name, reason: "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return parsed
    }

    private static func url(_ raw: String, parameter: String, base64: Bool) throws(URIParseError) -> URL {
        let text = base64 ? (Base64Text.decodeText(raw) ?? raw) : raw
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
              url.host?.isEmpty == false else {
            throw .invalidParameter(name: parameter, reason: "expected an http(s) URL\(base64 ? ", base64-encoded" : "")")
        }
        return url
    }

    static func checkName(_ name: String, parameter: String) throws(URIParseError) {
        guard !name.unicodeScalars.contains(where: isControl) else {
            throw .invalidParameter(name: parameter, reason: "it contains control characters")
        }
        // Bytes, not characters: one character can carry thousands of combining marks.
        guard name.utf8.count <= maximumNameLength else {
            throw .invalidParameter(name: parameter, reason: "it is longer than \(maximumNameLength) bytes (UTF-8)")
        }
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
            && scalar.value != 0x200D  // zero-width joiner appears in emoji names
    }

    /// The label: `issuer:account` or `account`, percent-decoded.
    ///
    /// The separator is the first literal `:` or, when there is none, the first encoded one
    /// (`%3A`), as the Key URI format allows; an encoded colon after a literal one is part of a
    /// name (``MechanismURI/otpauth(type:issuer:accountName:secret:algorithm:digits:period:counter:)``
    /// writes names that way). Spaces around the account name are dropped.
    private struct Label {
        var issuer: String?
        var accountName: String

        init(_ percentEncodedPath: String) throws(URIParseError) {
            var path = Substring(percentEncodedPath)
            if path.hasPrefix("/") { path = path.dropFirst() }
            let issuerPart: Substring?, accountPart: Substring
            if let colon = path.firstIndex(of: ":") {
                (issuerPart, accountPart) = (path[..<colon], path[path.index(after: colon)...])
            } else if let encoded = path.range(of: "%3A", options: .caseInsensitive) {
                (issuerPart, accountPart) = (path[..<encoded.lowerBound], path[encoded.upperBound...])
            } else {
                (issuerPart, accountPart) = (nil, path)
            }
            accountName = try Self.decode(accountPart).trimmingCharacters(in: .whitespaces)
            issuer = try issuerPart.map(Self.decode)
            guard !accountName.isEmpty else { throw .invalidParameter(name: "label", reason: "the account name is empty") }
            try MechanismURI.checkName(accountName, parameter: "label")
            if let issuer { try MechanismURI.checkName(issuer, parameter: "label") }
        }

        private static func decode(_ part: Substring) throws(URIParseError) -> String {
            guard let decoded = String(part).removingPercentEncoding else {
                throw .invalidParameter(name: "label", reason: "it is not valid percent-encoding")
            }
            return decoded
        }

        /// `name` with everything but unreserved characters (RFC 3986) percent-encoded.
        static func encode(_ name: String) -> String {
            name.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
        }

        private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
    }

    /// Query parameters by lower-cased name; duplicates and oversized values are refused.
    private struct Parameters {
        private var values: [String: String] = [:]

        init(_ items: [URLQueryItem]) throws(URIParseError) {
            for item in items {
                let name = item.name.lowercased()
                guard values[name] == nil else { throw .invalidParameter(name: name, reason: "it appears more than once") }
                let value = item.value ?? ""
                guard value.count <= MechanismURI.maximumValueLength else {
                    throw .invalidParameter(name: name, reason: "it is longer than \(MechanismURI.maximumValueLength) characters")
                }
                values[name] = value
            }
        }

        subscript(name: String) -> String? { values[name] }
    }
}

/// Lenient base64: standard or URL alphabet, with or without padding.
enum Base64Text {
    static func decode(_ text: String) -> Data? {
        var normalized = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            .replacingOccurrences(of: " ", with: "+")
        normalized += String(repeating: "=", count: (4 - normalized.count % 4) % 4)
        return Data(base64Encoded: normalized)
    }

    /// Decodes base64 that holds UTF-8 text without control characters, or returns `nil`.
    static func decodeText(_ text: String) -> String? {
        guard let data = decode(text), let string = String(data: data, encoding: .utf8),
              !string.unicodeScalars.contains(where: MechanismURI.isControl) else { return nil }
        return string
    }
}
