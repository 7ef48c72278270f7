import CofferMFAEngine
import Foundation

/// Reads PingAM's push messages and hands the network steps to the app's ``PingAMNetwork``.
///
/// A message is a JWT in `message` with a non-empty `messageId`; its claims become the
/// notification's fields: `u` the credential id, `c` the challenge, `t` the time to live
/// (default 120 s), `i` when it was sent (milliseconds), `m` the text, `p` the custom payload,
/// `n` the numbers challenge, `x` the context, `k` the type, `l` the load balancer cookie
/// (base64), `d` the user id. The JWT's signature is not checked here: the server checks the
/// response, which is signed with the credential's secret.
public final class PingAMPushHandler: PushHandler {
    private let network: (any PingAMNetwork)?

    /// A handler; without `network`, registering and answering fail with
    /// ``PushError/networkFailure(_:_:)`` saying that no network step was given.
    public init(network: (any PingAMNetwork)? = nil) {
        self.network = network
    }

    public func canHandle(messageData: [String: Any]) -> Bool {
        guard let message = messageData["message"] as? String, let messageId = messageData["messageId"] as? String,
              !messageId.isEmpty else { return false }
        return canHandle(message: message)
    }

    public func canHandle(message: String) -> Bool {
        (try? claims(message)).map { $0["u"] != nil && $0["c"] != nil } ?? false
    }

    public func parseMessage(messageData: [String: Any]) throws -> [String: Any] {
        guard let message = messageData["message"] as? String, let messageId = messageData["messageId"] as? String,
              !messageId.isEmpty else { throw PushError.messageParsingFailed("the payload has no message and messageId") }
        var fields = try parseMessage(message: message)
        fields["messageId"] = messageId
        return fields
    }

    public func parseMessage(message: String) throws -> [String: Any] {
        let claims = try claims(message)
        guard let credentialId = claims["u"] as? String, let challenge = claims["c"] as? String else {
            throw PushError.messageParsingFailed("the message has no credential (u) or challenge (c)")
        }
        var fields: [String: Any] = ["credentialId": credentialId, "challenge": challenge,
                                     "ttl": (claims["t"] as? NSNumber)?.intValue ?? Int(claims["t"] as? String ?? "") ?? 120]
        if let sent = (claims["i"] as? NSNumber)?.doubleValue { fields["sentAt"] = Date(timeIntervalSince1970: sent / 1000) }
        let names = ["m": "messageText", "p": "customPayload", "n": "numbersChallenge", "x": "contextInfo", "k": "pushType", "d": "userId"]
        for (claim, field) in names { if let value = claims[claim] as? String { fields[field] = value } }
        if let cookie = claims["l"] as? String { fields["loadBalancer"] = Base64Text.decodeText(cookie) ?? cookie }
        var additional: [String: Any] = [:]
        for (claim, value) in claims where !["u", "c", "t", "i", "m", "p", "n", "x", "k", "l", "d"].contains(claim) { additional[claim] = value }
        if !additional.isEmpty { fields["additionalData"] = additional }
        return fields
    }

    public func sendApproval(credential: PushCredential, notification: PushNotification, params: [String: Any]) async throws -> Bool {
        if notification.pushType == .challenge, (params["challengeResponse"] as? String ?? "").isEmpty {
            throw PushError.invalidParameterValue("a challenge notification needs a challenge response")
        }
        return try await requireNetwork().respond(credential: credential, notification: notification, approved: true, params: params)
    }

    public func sendDenial(credential: PushCredential, notification: PushNotification, params: [String: Any]) async throws -> Bool {
        try await requireNetwork().respond(credential: credential, notification: notification, approved: false, params: params)
    }

    public func setDeviceToken(credential: PushCredential, deviceToken: String, params: [String: Any]) async throws -> Bool {
        try await requireNetwork().updateDeviceToken(credential: credential, deviceToken: deviceToken, params: params)
    }

    public func register(credential: PushCredential, params: [String: Any]) async throws -> Bool {
        try await requireNetwork().register(credential: credential, params: params)
    }

    private func requireNetwork() throws -> any PingAMNetwork {
        guard let network else {
            throw PushError.networkFailure("no network step for PingAM: give PingAMPushHandler(network:) one, or set customPushHandlers[\"pingam\"]", nil)
        }
        return network
    }

    /// The JWT's claims: its payload, base64url JSON. At most 64 KiB of message.
    private func claims(_ jwt: String) throws -> [String: Any] {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard jwt.utf8.count <= 65_536, parts.count == 3, let payload = Base64Text.decode(String(parts[1])),
              let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any] else {
            throw PushError.messageParsingFailed("the message is not a JWT with a JSON payload")
        }
        return claims
    }
}
