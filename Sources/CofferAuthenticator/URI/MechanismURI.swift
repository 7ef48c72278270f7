import CofferMFAEngine
import CofferStorage
import Foundation

/// Parses the URIs issuers show as QR codes into an ``Account`` and its ``Mechanism``s, the way
/// the ForgeRock iOS and Android SDKs read them, so a QR code either accepts gives the same
/// account, mechanism and codes here.
///
/// - `otpauth://totp/Issuer:alice?secret=BASE32&issuer=Issuer&algorithm=SHA1&digits=6&period=30`
///   and `otpauth://hotp/…&counter=0`: one OATH mechanism.
/// - `pushauth://push/Issuer:alice?r=…&a=…&s=…&c=…&l=…&m=…`: one push mechanism. `r` and `a`
///   (registration and authentication endpoints), `l` (load-balancer cookie) and `issuer` are
///   base64 or base64url; `s` (shared secret) and `c` (challenge) are base64 in either
///   alphabet, stored as standard base64 with padding.
/// - `mfauth://totp/Issuer:alice?…`: both, a push mechanism and an OATH one, from one URI.
///
/// Rules, so behaviour is predictable:
/// - **Names.** The label is `issuer:account` (percent-encoded; spaces around either part are
///   ignored), `account`, or empty. The issuer is the `issuer` parameter when it is present and
///   not empty (the label's issuer then becomes ``Account/displayIssuer`` if they differ), else
///   the label's issuer, else the account name. An empty account name becomes `Untitled`. A URI
///   with neither an issuer nor an account name is refused.
/// - **Defaults.** algorithm SHA1, digits 6, period 30, counter 0 (HOTP), `version` 1.
/// - **Ranges.** Digits 6–8, period 1–86400 seconds, algorithm SHA1/SHA256/SHA384/SHA512/MD5
///   (SHA-224 is not supported: swift-crypto has no SHA-224), a counter from 0 to
///   Int64.max − 1, a secret that is valid base32 (OATH) or base64 (push), `version` 1 only.
/// - **Identifiers.** `uid` (user id), `oid` (OATH resource id) and `pid` (push resource id)
///   are decoded when they are base64 of text, and kept as given otherwise.
/// - **Hostile input is refused:** URIs over 16,384 characters, values over 2048, control
///   characters anywhere, names over 255 bytes of UTF-8, endpoints and images that are not
///   http(s) URLs.
public enum MechanismURI {
    /// What a URI describes.
    public struct Parsed: Sendable, Equatable {
        /// The account.
        public var account: Account
        /// Its mechanisms: one, or two for `mfauth` (push first, then OATH).
        public var mechanisms: [Mechanism]
    }

    /// An `otpauth://` URI for the given parts (so typed-in accounts and imported vault entries
    /// go through the same validation as scanned ones, and an account can be shown again as a
    /// QR code). Parameters left `nil` are omitted; `uid` and `resourceId` are written as
    /// ForgeRock servers write them (`uid`, `oid`, base64url), so they read back unchanged.
    public static func otpauth(
        type: MechanismType, issuer: String, accountName: String, secret: String, algorithm: String? = nil,
        digits: Int? = nil, period: Int? = nil, counter: UInt64? = nil, uid: String? = nil, resourceId: String? = nil
    ) -> String {
        AuthenticatorURI.otpauth(type: type.rawValue, issuer: issuer, accountName: accountName, secret: secret, algorithm: algorithm,
                                 digits: digits, period: period, counter: counter, uid: uid, resourceId: resourceId)
    }

    /// The `otpauth://` URI of an OATH mechanism, with every field it holds: what an
    /// authenticator app scans to take the account over.
    public static func otpauth(_ mechanism: Mechanism) -> String {
        otpauth(type: mechanism.type, issuer: mechanism.issuer, accountName: mechanism.accountName, secret: mechanism.secret,
                algorithm: mechanism.algorithm.rawValue.uppercased(), digits: mechanism.digits,
                period: mechanism.period, counter: mechanism.type == .hotp ? mechanism.counter : nil,
                uid: mechanism.uid, resourceId: mechanism.resourceId)
    }

    /// Parses `text`. `now` becomes the ``Account/timeAdded`` and ``Mechanism/timeAdded``.
    public static func parse(_ text: String, now: Date = Date()) throws(URIParseError) -> Parsed {
        do {
            return try read(text, now: now)
        } catch {
            throw URIParseError(error)
        }
    }

    /// ``parse(_:now:)`` with the engine's error.
    private static func read(_ text: String, now: Date) throws(URIReadError) -> Parsed {
        let uri = try AuthenticatorURI(text)
        let (scheme, type, label, parameters) = (uri.scheme, uri.type, uri.label, uri.parameters)
        if let version = parameters["version"], version != "1" {
            throw .invalidParameter(name: "version", reason: "expected 1, the only version of the format Coffer knows")
        }

        switch scheme {
        case "otpauth":
            guard var oathType = MechanismType(rawValue: type), oathType != .push else { throw .unsupportedType(type) }
            // KeePassXC and others mark Steam codes on a TOTP URI.
            if oathType == .totp, parameters["encoder"]?.lowercased() == "steam" { oathType = .steam }
            let account = try makeAccount(label, parameters, issuerIsBase64: false, now: now)
            return Parsed(account: account, mechanisms: [try oath(oathType, account, uri, now: now)])
        case "pushauth":
            guard type == "push" else { throw .unsupportedType(type) }
            let account = try makeAccount(label, parameters, issuerIsBase64: true, now: now)
            return Parsed(account: account, mechanisms: [try push(account, uri, now: now)])
        case "mfauth":
            guard let oathType = MechanismType(rawValue: type), oathType != .push else { throw .unsupportedType(type) }
            let account = try makeAccount(label, parameters, issuerIsBase64: true, now: now)
            return Parsed(account: account, mechanisms: [
                try push(account, uri, now: now), try oath(oathType, account, uri, now: now),
            ])
        default:
            throw .unsupportedScheme(scheme)
        }
    }

    // MARK: - Parts

    private static func makeAccount(_ label: AuthenticatorURI.Label, _ parameters: AuthenticatorURI.Parameters, issuerIsBase64: Bool, now: Date) throws(URIReadError) -> Account {
        var issuer = label.issuer
        var displayIssuer: String?
        // A whitespace-only issuer says nothing either.
        if let raw = parameters["issuer"],
           case let fromParameter = (issuerIsBase64 ? (Base64Text.decodeText(raw) ?? raw) : raw).trimmingCharacters(in: .whitespaces),
           !fromParameter.isEmpty {
            try AuthenticatorURI.checkName(fromParameter, parameter: "issuer")
            if let labelIssuer = label.issuer, labelIssuer != fromParameter { displayIssuer = labelIssuer }
            issuer = fromParameter
        }
        // ForgeRock's rules: no issuer → the account name; no account name → "Untitled".
        guard let issuer = issuer ?? label.accountName else {
            throw .invalidParameter(name: "label", reason: "it names neither an issuer nor an account, and there is no issuer parameter")
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
            issuer: issuer, accountName: label.accountName ?? "Untitled", displayIssuer: displayIssuer,
            imageURL: try parameters["image"].map { raw throws(URIReadError) in try AuthenticatorURI.url(raw, parameter: "image").absoluteString },
            backgroundColor: backgroundColor, timeAdded: now, policies: policies)
    }

    private static func oath(_ type: MechanismType, _ account: Account, _ uri: AuthenticatorURI, now: Date) throws(URIReadError) -> Mechanism {
        let parameters = uri.parameters
        let secret = try uri.base32Secret().text
        var algorithm = OathAlgorithm.sha1
        if let raw = parameters["algorithm"] {
            guard let parsed = OathAlgorithm(uriValue: raw) else {
                throw .invalidParameter(name: "algorithm", reason: "expected SHA1, SHA256, SHA384, SHA512 or MD5")
            }
            algorithm = parsed
        }
        // Steam codes are always 5 characters (whatever a `digits` parameter says), SHA-1, 30 s.
        let digits = type == .steam ? 5 : try uri.integer("digits", default: 6, range: 6...8)
        let period = try uri.integer("period", default: 30, range: 1...86_400)
        if type == .steam, algorithm != .sha1 || period != 30 {
            throw .invalidParameter(name: algorithm != .sha1 ? "algorithm" : "period", reason: "Steam Guard codes use SHA1 and 30 seconds")
        }
        var counter: UInt64 = 0
        // Absent: 0, as in the ForgeRock SDKs (many HOTP QR codes carry no counter).
        if type == .hotp, let raw = parameters["counter"] {
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
            uid: try parameters.identifier("uid"), resourceId: try parameters.identifier("oid"), timeAdded: now)
    }

    private static func push(_ account: Account, _ uri: AuthenticatorURI, now: Date) throws(URIReadError) -> Mechanism {
        let parameters = uri.parameters
        func required(_ name: String) throws(URIReadError) -> String {
            guard let value = parameters[name] else { throw .missingParameter(name) }
            return value
        }
        let registration = try uri.url("r")
        let authentication = try uri.url("a")
        let secret = try required("s")
        guard let secretBytes = Base64Text.decode(secret), secretBytes.count >= 16 else {
            throw .invalidParameter(name: "s", reason: "expected a base64 shared secret of at least 16 bytes")
        }
        // The server may send base64url; the response is signed over the standard form.
        guard let challenge = Base64Text.normalize(try required("c")) else {
            throw .invalidParameter(name: "c", reason: "expected a base64 challenge")
        }
        let messageId = try required("m")
        try AuthenticatorURI.checkName(messageId, parameter: "m")
        if let cookie = parameters["l"], Base64Text.decodeText(cookie) == nil {
            throw .invalidParameter(name: "l", reason: "expected a base64 load-balancer cookie")
        }
        return Mechanism(
            issuer: account.issuer, accountName: account.accountName, type: .push,
            secret: Data(secretBytes).base64EncodedString(), uid: try parameters.identifier("uid"), resourceId: try parameters.identifier("pid"),
            timeAdded: now, registrationEndpoint: registration, authenticationEndpoint: authentication,
            messageId: messageId, challenge: challenge)
    }

    /// Control, format and separator characters (``TerminalText/isControl(_:)``), refused in
    /// names so that a URI cannot carry what would rewrite a terminal.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        AuthenticatorURI.isControl(scalar)
    }
}

/// Why an authenticator URI was refused. Each case names what to fix; none quotes a secret.
///
/// The reader is the one CofferOath and CofferPush use too (their errors are Ping's); its
/// messages are the same for all three.
public enum URIParseError: Error, Sendable, Equatable {
    /// The text is not a URI of the expected shape.
    case malformed(reason: String)
    /// The scheme is not `otpauth`, `pushauth` or `mfauth`.
    case unsupportedScheme(String)
    /// The type (the URI's host) is not one this scheme allows.
    case unsupportedType(String)
    /// A required parameter is absent.
    case missingParameter(String)
    /// A parameter is present but unusable.
    case invalidParameter(name: String, reason: String)
    /// The URI is longer than anything legitimate (a guard against hostile input).
    case tooLong(length: Int, limit: Int)

    /// The reader's error as this module's.
    init(_ error: URIReadError) {
        switch error {
        case .malformed(let reason): self = .malformed(reason: reason)
        case .unsupportedScheme(let scheme): self = .unsupportedScheme(scheme)
        case .unsupportedType(let type): self = .unsupportedType(type)
        case .missingParameter(let name): self = .missingParameter(name)
        case let .invalidParameter(name, reason): self = .invalidParameter(name: name, reason: reason)
        case let .tooLong(length, limit): self = .tooLong(length: length, limit: limit)
        }
    }

    /// The same error as the reader's, whose messages it shows.
    private var read: URIReadError {
        switch self {
        case .malformed(let reason): .malformed(reason: reason)
        case .unsupportedScheme(let scheme): .unsupportedScheme(scheme)
        case .unsupportedType(let type): .unsupportedType(type)
        case .missingParameter(let name): .missingParameter(name)
        case let .invalidParameter(name, reason): .invalidParameter(name: name, reason: reason)
        case let .tooLong(length, limit): .tooLong(length: length, limit: limit)
        }
    }
}

extension URIParseError: LocalizedError, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// What is wrong with the URI, naming the parameter or part; never the secret. A scheme, type
    /// or parameter name is quoted only when it is one authenticator URIs use: anything else
    /// may be a secret pasted in the wrong place, so it is described, not repeated.
    public var errorDescription: String? { read.errorDescription }

    /// The ``errorDescription``, so that printing the error never repeats what it does not quote.
    public var description: String { read.description }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// Only ``description``, so `dump(_:)` and the debugger show no more than the message.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
