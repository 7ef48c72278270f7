import CofferMFATransfer
import Foundation

/// An account at an issuer, for which one or more ``Mechanism``s generate codes or approve logins.
///
/// An account's identity is the pair (``issuer``, ``accountName``), kept as two fields.
/// ``identifier`` renders it as one string for the spec's `getAccount(accountIdentifier:)`, in a
/// form that cannot collide: `-` and `%` inside either part are percent-encoded, so
/// ("a-b", "c") is `a%2Db-c` and ("a", "b-c") is `a-b%2Dc`.
public struct Account: Codable, Sendable, Hashable {
    /// The service that issued the account, for example `ForgeRock`.
    public var issuer: String
    /// The user's name at the issuer.
    public var accountName: String
    /// An issuer name to show instead of ``issuer``.
    public var displayIssuer: String?
    /// An account name to show instead of ``accountName``.
    public var displayAccountName: String?
    /// A logo for the account.
    public var imageURL: String?
    /// A background colour for the account, as `#rrggbb`.
    public var backgroundColor: String?
    /// When the account was added.
    public var timeAdded: Date
    /// The authenticator policies the issuer attached (JSON text), if any.
    public var policies: String?
    /// The name of the policy that locked the account, if it is locked.
    public var lockingPolicy: String?
    /// Whether the account is locked: a locked account generates no codes.
    public var isLocked: Bool
    /// What the user keeps beside the account (a note, groups, a favourite mark, an icon's
    /// name), brought by an import; `nil` for none. Stores keep it sealed like a secret.
    public var details: AccountDetails?

    /// Creates an account.
    public init(
        issuer: String, accountName: String, displayIssuer: String? = nil, displayAccountName: String? = nil,
        imageURL: String? = nil, backgroundColor: String? = nil, timeAdded: Date = Date(), policies: String? = nil,
        lockingPolicy: String? = nil, isLocked: Bool = false, details: AccountDetails? = nil
    ) {
        self.issuer = issuer
        self.accountName = accountName
        self.displayIssuer = displayIssuer
        self.displayAccountName = displayAccountName
        self.imageURL = imageURL
        self.backgroundColor = backgroundColor
        self.timeAdded = timeAdded
        self.policies = policies
        self.lockingPolicy = lockingPolicy
        self.isLocked = isLocked
        self.details = details?.nonEmpty
    }

    /// The issuer name to show: ``displayIssuer`` when set, else ``issuer``.
    public var shownIssuer: String { displayIssuer ?? issuer }

    /// The account name to show: ``displayAccountName`` when set, else ``accountName``.
    public var shownAccountName: String { displayAccountName ?? accountName }

    /// The account's identity as one string: `issuer-accountName`, each part with `%` and `-`
    /// percent-encoded, so distinct accounts never share an identifier.
    public var identifier: String { Self.identifier(issuer: issuer, accountName: accountName) }

    /// The identifier of the account (`issuer`, `accountName`).
    public static func identifier(issuer: String, accountName: String) -> String {
        IdentifierCoding.join([issuer, accountName])
    }
}

/// Joins identity parts with `-` so that the result can be split back unambiguously.
package enum IdentifierCoding {
    static func escape(_ part: String) -> String {
        // Most names hold neither character: skip Foundation's replacing (it dominated listings).
        guard part.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "-") }) else { return part }
        return part.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "-", with: "%2D")
    }

    static func unescape(_ part: Substring) -> String {
        part.replacingOccurrences(of: "%2D", with: "-").replacingOccurrences(of: "%25", with: "%")
    }

    static func join(_ parts: [String]) -> String {
        parts.map(escape).joined(separator: "-")
    }

    package static func split(_ identifier: String) -> [String] {
        identifier.split(separator: "-", omittingEmptySubsequences: false).map(unescape)
    }
}
