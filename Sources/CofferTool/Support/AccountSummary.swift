import CofferAuthenticator
import Foundation

/// An account as `--json` shows it. Secrets only with `--show-secret`.
struct AccountSummary: Encodable {
    struct MechanismSummary: Encodable {
        let uuid: String
        let type: String
        let algorithm: String?
        let digits: Int?
        let period: Int?
        let counter: UInt64?
        let secret: String?
        /// `true` when read without the key (it could not be opened): the plain columns, which
        /// nothing checked. Absent otherwise.
        var unverified: Bool? = nil
    }

    /// The names as the issuer gave them: the account's identity, which `rename` never changes.
    struct Identity: Encodable {
        let issuer: String
        let accountName: String
    }

    /// The names shown (after `coffer rename`, the new ones).
    let issuer: String
    let accountName: String
    let identity: Identity
    let locked: Bool
    let lockingPolicy: String?
    let added: Date
    let mechanisms: [MechanismSummary]

    /// `outlines`: the mechanisms as read without the key, for an account whose mechanisms
    /// could not be opened.
    init(_ entry: AccountEntry, showSecrets: Bool, outlines: [MechanismOutline] = []) {
        issuer = entry.account.shownIssuer
        accountName = entry.account.shownAccountName
        identity = Identity(issuer: entry.account.issuer, accountName: entry.account.accountName)
        locked = entry.account.isLocked
        lockingPolicy = entry.account.lockingPolicy
        added = entry.account.timeAdded
        mechanisms = entry.mechanisms.map { mechanism in
            let oath = mechanism.type != .push
            return MechanismSummary(
                uuid: mechanism.mechanismUUID, type: mechanism.type.rawValue,
                algorithm: oath ? mechanism.algorithm.rawValue.uppercased() : nil, digits: oath ? mechanism.digits : nil,
                period: mechanism.type == .totp ? mechanism.period : nil, counter: mechanism.type == .hotp ? mechanism.counter : nil,
                secret: showSecrets ? mechanism.secret : nil)
        } + outlines.map { outline in
            let oath = outline.type != .push
            return MechanismSummary(
                uuid: outline.mechanismUUID, type: outline.type.rawValue,
                algorithm: oath ? outline.algorithm.uppercased() : nil, digits: oath ? outline.digits : nil,
                period: outline.type == .totp ? outline.period : nil, counter: outline.type == .hotp ? UInt64(clamping: outline.counter) : nil,
                secret: nil, unverified: true)
        }
    }
}
