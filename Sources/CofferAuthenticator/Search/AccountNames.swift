/// The names an account is listed and found by, without the rest of its record: what finding
/// one account among many needs (``AccountSearch``).
///
/// ``StorageClient/getAllAccountNames()`` reads them; ``AuthenticatorClient`` then reads whole
/// only the accounts a query names.
public struct AccountNames: Hashable, Sendable {
    /// The service that issued the account (``Account/issuer``).
    public var issuer: String
    /// The user's name at the issuer (``Account/accountName``).
    public var accountName: String
    /// An issuer name shown instead of ``issuer`` (``Account/displayIssuer``).
    public var displayIssuer: String?
    /// An account name shown instead of ``accountName`` (``Account/displayAccountName``).
    public var displayAccountName: String?

    /// Names as stored.
    public init(issuer: String, accountName: String, displayIssuer: String? = nil, displayAccountName: String? = nil) {
        self.issuer = issuer
        self.accountName = accountName
        self.displayIssuer = displayIssuer
        self.displayAccountName = displayAccountName
    }

    /// The names of `account`.
    public init(_ account: Account) {
        self.init(issuer: account.issuer, accountName: account.accountName,
                  displayIssuer: account.displayIssuer, displayAccountName: account.displayAccountName)
    }

    /// The issuer name shown: ``displayIssuer`` when set, else ``issuer``.
    public var shownIssuer: String { displayIssuer ?? issuer }

    /// The account name shown: ``displayAccountName`` when set, else ``accountName``.
    public var shownAccountName: String { displayAccountName ?? accountName }

    /// The account's identifier (``Account/identifier``), for reading it whole.
    public var identifier: String { Account.identifier(issuer: issuer, accountName: accountName) }
}
