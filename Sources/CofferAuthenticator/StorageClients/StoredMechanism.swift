import CofferStorage
import Foundation

/// A mechanism as a database row holds it: the plain columns, with the secret (and a push
/// registration's challenge) still sealed. The SQLite and PostgreSQL clients read their rows
/// into it, each with its own driver, and open it the same way.
package struct StoredMechanism: Sendable {
    package let uuid: String
    package let issuer: String
    package let accountName: String
    package let type: String
    package let algorithm: String
    package let secret: Data
    package let digits: Int
    package let period: Int
    package let counter: Int64
    package let uid: String?
    package let resourceId: String?
    package let timeAdded: Double
    package let registrationEndpoint: String?
    package let authenticationEndpoint: String?
    package let messageId: String?
    package let challenge: Data?

    /// The columns in the order both clients store and read them (each names them its own way).
    package init(
        uuid: String, issuer: String, accountName: String, type: String, algorithm: String, secret: Data, digits: Int, period: Int,
        counter: Int64, uid: String?, resourceId: String?, timeAdded: Double, registrationEndpoint: String?,
        authenticationEndpoint: String?, messageId: String?, challenge: Data?
    ) {
        self.uuid = uuid
        self.issuer = issuer
        self.accountName = accountName
        self.type = type
        self.algorithm = algorithm
        self.secret = secret
        self.digits = digits
        self.period = period
        self.counter = counter
        self.uid = uid
        self.resourceId = resourceId
        self.timeAdded = timeAdded
        self.registrationEndpoint = registrationEndpoint
        self.authenticationEndpoint = authenticationEndpoint
        self.messageId = messageId
        self.challenge = challenge
    }

    /// The identity its secret must open under (`MechanismBinding`'s full binding), from the
    /// row's own columns: a row whose columns were edited does not open.
    package var secretIdentity: String {
        MechanismBinding.secretIdentity(uuid: uuid, columns: [issuer, accountName, type, algorithm, String(digits), String(period), String(counter)])
    }

    /// The mechanism, with its secret and challenge as opened.
    ///
    /// - Parameter location: Names the row in the error for an unknown type or algorithm.
    package func mechanism(secret: String, challenge: String?, location: String) throws -> Mechanism {
        guard let mechanismType = MechanismType(rawValue: type), let oathAlgorithm = OathAlgorithm(rawValue: algorithm) else {
            throw StorageError.corrupted(location: location, reason: "unknown mechanism type or algorithm")
        }
        return Mechanism(
            mechanismUUID: uuid, issuer: issuer, accountName: accountName, type: mechanismType, secret: secret, algorithm: oathAlgorithm,
            digits: digits, period: period, counter: UInt64(bitPattern: counter), uid: uid, resourceId: resourceId,
            timeAdded: Date(timeIntervalSinceReferenceDate: timeAdded),
            registrationEndpoint: registrationEndpoint.flatMap(URL.init(string:)),
            authenticationEndpoint: authenticationEndpoint.flatMap(URL.init(string:)),
            messageId: messageId, challenge: challenge)
    }
}
