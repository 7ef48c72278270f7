import CofferAuthenticator
import CofferOath
import CofferPush
import Foundation

/// How a legacy record becomes a record of Ping's current modules (reference §1.3, §7.4), with
/// the ids kept: an OATH credential's id is its mechanism's UUID (Android makes a new one, so a
/// second run doubles everything), a push credential's id is its mechanism's UUID (the server
/// knows it), a notification's id is its legacy identifier (mechanism and message id).
enum LegacyMapping {
    /// Why a legacy mechanism has no counterpart; it stays in the source.
    struct Unsupported: Error, Sendable {
        let reason: String
    }

    /// The OATH credential of a TOTP or HOTP mechanism of `account`, its fields from the account
    /// as Ping's migration takes them.
    static func oathCredential(_ mechanism: Mechanism, of account: Account) throws(Unsupported) -> OathCredential {
        let type: OathType
        switch mechanism.type {
        case .totp: type = .totp
        case .hotp: type = .hotp
        case .steam: throw Unsupported(reason: "Steam codes have no type in Ping's OATH module")
        case .push: throw Unsupported(reason: "a push mechanism is not an OATH credential")
        }
        guard let algorithm = CofferOath.OathAlgorithm(rawValue: mechanism.algorithm.rawValue.uppercased()) else {
            throw Unsupported(reason: "the algorithm \(mechanism.algorithm.rawValue.uppercased()) has no counterpart in Ping's OATH module")
        }
        guard let counter = Int(exactly: mechanism.counter) else {
            throw Unsupported(reason: "its HOTP counter is beyond what Ping's OATH module stores")
        }
        let credential = OathCredential(
            id: mechanism.mechanismUUID, userId: mechanism.uid, resourceId: mechanism.resourceId ?? mechanism.mechanismUUID,
            issuer: account.issuer, displayIssuer: account.displayIssuer, accountName: account.accountName,
            displayAccountName: account.displayAccountName, oathType: type, oathAlgorithm: algorithm, digits: mechanism.digits,
            period: mechanism.period, counter: counter, createdAt: account.timeAdded, imageURL: account.imageURL,
            backgroundColor: account.backgroundColor, policies: account.policies, lockingPolicy: account.lockingPolicy,
            isLocked: account.isLocked, secretKey: mechanism.secret)
        do {
            try credential.validate()
        } catch {
            throw Unsupported(reason: "Ping's OATH module refuses it (\((error as? LocalizedError)?.errorDescription ?? "\(error)"))")
        }
        return credential
    }

    /// The push credential of a push mechanism of `account`: the endpoint without its query.
    static func pushCredential(_ mechanism: Mechanism, of account: Account) throws(Unsupported) -> PushCredential {
        guard let endpoint = mechanism.authenticationEndpoint ?? mechanism.registrationEndpoint else {
            throw Unsupported(reason: "it has no server endpoint")
        }
        let server = endpoint.absoluteString.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return PushCredential(
            id: mechanism.mechanismUUID, userId: mechanism.uid, resourceId: mechanism.resourceId ?? "", issuer: account.issuer,
            displayIssuer: account.displayIssuer, accountName: account.accountName, displayAccountName: account.displayAccountName,
            serverEndpoint: server, sharedSecret: mechanism.secret, createdAt: account.timeAdded, imageURL: account.imageURL,
            backgroundColor: account.backgroundColor, policies: account.policies, lockingPolicy: account.lockingPolicy,
            isLocked: account.isLocked, platform: .pingAM)
    }

    /// The notification, under its legacy identifier; an unknown type is read as `default`.
    static func notification(_ legacy: CofferAuthenticator.PushNotification) -> CofferPush.PushNotification {
        CofferPush.PushNotification(
            id: legacy.identifier, credentialId: legacy.mechanismUUID, ttl: legacy.ttl, messageId: legacy.messageId,
            messageText: legacy.message, customPayload: legacy.customPayload, challenge: legacy.challenge,
            numbersChallenge: legacy.numbersChallenge, loadBalancer: legacy.loadBalanceKey, contextInfo: legacy.contextInfo,
            pushType: PushType(rawValue: legacy.pushType.lowercased()) ?? .default, createdAt: legacy.timeAdded,
            approved: legacy.approved, pending: legacy.pending)
    }

    /// The device token, under a fixed id (there is one legacy token).
    static func deviceToken(_ legacy: CofferAuthenticator.PushDeviceToken) -> CofferPush.PushDeviceToken {
        CofferPush.PushDeviceToken(id: "legacy-device-token", token: legacy.tokenId, createdAt: legacy.timeAdded)
    }

    // MARK: - Sameness (what a re-run accepts as its own earlier copy)

    /// Whether `stored` is `copy` but perhaps for its HOTP counter and the migration's lock.
    static func same(_ stored: OathCredential, _ copy: OathCredential) -> Bool {
        stored.id == copy.id && stored.userId == copy.userId && stored.resourceId == copy.resourceId && stored.issuer == copy.issuer
            && stored.displayIssuer == copy.displayIssuer && stored.accountName == copy.accountName
            && stored.displayAccountName == copy.displayAccountName && stored.oathType == copy.oathType
            && stored.oathAlgorithm == copy.oathAlgorithm && stored.digits == copy.digits && stored.period == copy.period
            && stored.secret == copy.secret && abs(stored.createdAt.timeIntervalSince(copy.createdAt)) < 0.001
            && stored.imageURL == copy.imageURL && stored.backgroundColor == copy.backgroundColor && stored.policies == copy.policies
    }

    /// Whether `stored` is `copy` but perhaps for the lock a policy set since.
    static func same(_ stored: PushCredential, _ copy: PushCredential) -> Bool {
        stored.id == copy.id && stored.userId == copy.userId && stored.resourceId == copy.resourceId && stored.issuer == copy.issuer
            && stored.displayIssuer == copy.displayIssuer && stored.accountName == copy.accountName
            && stored.displayAccountName == copy.displayAccountName && stored.serverEndpoint == copy.serverEndpoint
            && stored.secret == copy.secret && abs(stored.createdAt.timeIntervalSince(copy.createdAt)) < 0.001
            && stored.imageURL == copy.imageURL && stored.backgroundColor == copy.backgroundColor && stored.policies == copy.policies
            && stored.platform == copy.platform
    }

    /// Whether `stored` is `copy`, but perhaps answered since (pending, approved, responded).
    static func same(_ stored: CofferPush.PushNotification, _ copy: CofferPush.PushNotification) -> Bool {
        stored.id == copy.id && stored.credentialId == copy.credentialId && stored.messageId == copy.messageId
            && stored.challenge == copy.challenge && stored.ttl == copy.ttl && stored.messageText == copy.messageText
            && stored.customPayload == copy.customPayload && stored.numbersChallenge == copy.numbersChallenge
            && stored.loadBalancer == copy.loadBalancer && stored.contextInfo == copy.contextInfo && stored.pushType == copy.pushType
            && abs(stored.createdAt.timeIntervalSince(copy.createdAt)) < 0.001
    }
}
