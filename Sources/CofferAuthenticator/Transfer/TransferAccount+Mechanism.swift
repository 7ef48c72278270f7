import CofferMFATransfer
import Foundation

/// An exported account made from a legacy account and mechanism.
extension TransferAccount {
    /// The exported form of an OATH mechanism of `account`, under the names shown for the account
    /// (a renamed account is exported as renamed), its id lower-cased as Aegis writes ids; `nil`
    /// for a push mechanism, which no other authenticator can take. The account's details go with it.
    public init?(account: Account, mechanism: Mechanism) {
        guard mechanism.type != .push else { return nil }
        self.init(type: mechanism.type.rawValue, issuer: account.shownIssuer, accountName: account.shownAccountName,
                  secret: mechanism.secret, algorithm: mechanism.algorithm.rawValue.uppercased(), digits: mechanism.digits,
                  period: mechanism.type == .hotp ? nil : mechanism.period, counter: mechanism.type == .hotp ? mechanism.counter : nil,
                  uuid: mechanism.mechanismUUID.lowercased(), userId: mechanism.uid, resourceId: mechanism.resourceId,
                  details: account.details)
    }
}

/// Aegis vault entries to and from the legacy models.
extension AegisVault {
    /// The vault entry for an OATH mechanism of `account` (push mechanisms have no Aegis form),
    /// under the names shown for the account (see `AegisVault.entry(_:)`).
    public static func entry(account: Account, mechanism: Mechanism) -> Entry? {
        TransferAccount(account: account, mechanism: mechanism).flatMap(entry)
    }

    /// The account and mechanism for a vault entry, validated like a URI; `nil` for types Coffer
    /// does not support (motp, yandex).
    public static func mechanism(for entry: Entry, now: Date = Date()) throws(URIParseError) -> (Account, Mechanism)? {
        guard let type = MechanismType(rawValue: entry.type.lowercased()), type != .push else { return nil }
        let uri = MechanismURI.otpauth(
            type: type, issuer: entry.issuer, accountName: entry.name, secret: entry.info.secret, algorithm: entry.info.algo,
            digits: entry.info.digits, period: entry.info.period, counter: type == .hotp ? entry.info.counter ?? 0 : nil)
        let parsed = try MechanismURI.parse(uri, now: now)
        var mechanism = parsed.mechanisms[0]
        if UUID(uuidString: entry.uuid) != nil { mechanism.mechanismUUID = entry.uuid.uppercased() }
        return (parsed.account, mechanism)
    }
}
