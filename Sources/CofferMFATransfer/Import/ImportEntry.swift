import CofferMFAEngine
import CofferStorage
import Foundation

/// One account as an export file holds it: read, but not yet checked. Each generation's client
/// checks it the way it checks a scanned URI when it imports it (CofferAuthenticator's
/// `AuthenticatorClient.importEntries(_:overwrite:trashReason:)`, CofferOath's
/// `OathClient.importEntries(_:overwrite:)`).
public struct ImportEntry: Sendable, Equatable {
    /// What the file says about the account.
    public enum Content: Sendable, Equatable {
        /// An `otpauth://`, `pushauth://` or `mfauth://` URI.
        case uri(String)
        /// The parts of an OATH account.
        case fields(Fields)
        /// Not importable, and why (a type Coffer does not know, a part missing).
        case refused(String)
    }

    /// The parts of an OATH account, as an app exports them (the same type exports write from).
    public typealias Fields = TransferAccount

    /// How the entry is named in reports: `Issuer: account (type)`, never the secret.
    public var title: String
    /// What the file says about the account: a URI, its parts, or why it cannot be imported.
    public var content: Content
    /// What the file keeps beside the account (note, groups, favourite, icon name), if anything.
    public var details: AccountDetails?

    /// An entry; control characters in `title` (taken from the file) are shown escaped
    /// (`\u{1B}`), so a crafted name cannot rewrite the lines of a report around it.
    public init(title: String, content: Content, details: AccountDetails? = nil) {
        self.title = Self.printable(title)
        self.content = content
        self.details = details?.nonEmpty
    }

    /// `text` with control and format characters written as `\u{…}`.
    package static func printable(_ text: String) -> String {
        String(TerminalText.escaped(text).prefix(300))
    }

    /// An entry for `fields`, titled after them, with their details.
    public static func account(_ fields: Fields) -> ImportEntry {
        ImportEntry(title: fields.title, content: .fields(fields), details: fields.details)
    }
}

/// The parts of an OATH account as apps export them, neither generation's model: what the
/// format readers produce and what the exporters (``AegisVault``, ``GoogleAuthenticatorTransfer``,
/// ``AccountExport``) write.
public struct TransferAccount: Sendable, Equatable {
    /// `totp`, `hotp` or `steam` (anything else is refused when imported).
    public var type: String
    /// Who issued the account (the service's name); may be empty.
    public var issuer: String
    /// The account's name at the issuer (a user name or an email address).
    public var accountName: String
    /// The secret, in base32.
    public var secret: String
    /// `SHA1`, `SHA256`, … (the URI spellings); `nil` for the default.
    public var algorithm: String?
    /// How many digits a code has; `nil` for the default (6).
    public var digits: Int?
    /// A TOTP code's lifetime in seconds; `nil` for the default (30).
    public var period: Int?
    /// A HOTP mechanism's counter: the next code is made from it. `nil` for 0.
    public var counter: UInt64?
    /// The app's id for the entry, kept when it is a UUID that no other stored object has.
    public var uuid: String?
    /// The user's id at the issuer (a ForgeRock or Ping server's `uid`), when the account has one.
    public var userId: String?
    /// The issuer's id for the account (a ForgeRock or Ping server's `oid`), when it has one.
    public var resourceId: String?
    /// What the app keeps beside the account (note, groups, favourite, icon name), if anything.
    public var details: AccountDetails?

    /// Creates the parts of an account; the optional ones default to the OATH defaults.
    public init(type: String, issuer: String, accountName: String, secret: String, algorithm: String? = nil,
                digits: Int? = nil, period: Int? = nil, counter: UInt64? = nil, uuid: String? = nil,
                userId: String? = nil, resourceId: String? = nil, details: AccountDetails? = nil) {
        self.type = type
        self.issuer = issuer
        self.accountName = accountName
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
        self.counter = counter
        self.uuid = uuid
        self.userId = userId
        self.resourceId = resourceId
        self.details = details?.nonEmpty
    }

    /// `Issuer: account (type)`, as reports name an account; never the secret. Control
    /// characters in the names are shown escaped (`\u{1B}`), so a crafted name cannot rewrite
    /// the lines of a report around it.
    public var title: String {
        ImportEntry.printable("\(issuer): \(accountName) (\(type.lowercased()))")
    }

    /// The account's `otpauth://` URI, with the parameters it has (a HOTP account's counter
    /// always; `uid` and `oid` as ForgeRock servers write them): what a generation parses to
    /// check it as a scanned URI, and what `uris` and `qr` exports write.
    public var otpauthURI: String {
        let type = type.lowercased()
        return AuthenticatorURI.otpauth(type: type, issuer: issuer, accountName: accountName, secret: secret, algorithm: algorithm,
                                        digits: digits, period: period, counter: type == "hotp" ? counter ?? 0 : nil,
                                        uid: userId, resourceId: resourceId)
    }

    /// The types an `otpauth://` URI carries that Coffer's generations make codes for.
    static let otpauthTypes: Set<String> = ["totp", "hotp", "steam"]
}

extension TransferAccount {
    /// Splits an app's single name field `Issuer:account` when the app gave no issuer of its
    /// own; an issuer given is stripped from the front of the name (`Issuer:account` under
    /// issuer `Issuer` is `account`).
    static func names(issuer: String?, name: String) -> (issuer: String, accountName: String) {
        let issuer = issuer?.trimmingCharacters(in: .whitespaces) ?? ""
        let name = name.trimmingCharacters(in: .whitespaces)
        if issuer.isEmpty, let colon = name.firstIndex(of: ":") {
            return (String(name[..<colon]).trimmingCharacters(in: .whitespaces),
                    String(name[name.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        if !issuer.isEmpty, name.hasPrefix(issuer + ":") {
            return (issuer, String(name.dropFirst(issuer.count + 1)).trimmingCharacters(in: .whitespaces))
        }
        return (issuer, name)
    }
}

extension ImportEntry.Content: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Which kind of content, without the URI or the secret (both hold the secret): `uri(<redacted>)`,
    /// `fields(…)` or `refused(<why>)`.
    public var description: String {
        switch self {
        case .uri: "uri(<redacted>)"
        case .fields(let fields): "fields(\(fields))"
        case .refused(let reason): "refused(\(reason))"
        }
    }

    /// The same as ``description``: the secret stays out of `debugPrint` too.
    public var debugDescription: String { description }

    /// Only ``description``, so `dump(_:)` and the debugger cannot reveal the secret.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

extension TransferAccount: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The type, issuer and account; the secret shows only as `<redacted>`.
    public var description: String {
        "Fields(\(type), \(issuer): \(accountName), secret: <redacted>)"
    }

    /// The same as ``description``: the secret stays out of `debugPrint` too.
    public var debugDescription: String { description }

    /// Only ``description``, so `dump(_:)` and the debugger cannot reveal the secret.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
