import Foundation

/// What a push platform does: recognise and read its messages, and talk to its server
/// (register, approve, deny, update the device token), as Ping's Push module declares it.
///
/// The network half is what an app provides on Linux: Coffer ships no HTTP client for PingAM
/// (no server is reachable from its tests, so no code of that kind could be shown to work).
/// ``PingAMPushHandler`` reads PingAM's messages and hands the network steps to the
/// ``PingAMNetwork`` an app gives it.
public protocol PushHandler: AnyObject, Sendable {
    /// Whether this handler reads `messageData` (a notification's payload).
    func canHandle(messageData: [String: Any]) -> Bool
    /// Whether this handler reads `message` (a JWT or JSON string).
    func canHandle(message: String) -> Bool
    /// The fields of a notification read from `messageData`.
    func parseMessage(messageData: [String: Any]) throws -> [String: Any]
    /// The fields of a notification read from `message`.
    func parseMessage(message: String) throws -> [String: Any]
    /// Sends an approval; `true` when the server accepted it.
    func sendApproval(credential: PushCredential, notification: PushNotification, params: [String: Any]) async throws -> Bool
    /// Sends a denial; `true` when the server accepted it.
    func sendDenial(credential: PushCredential, notification: PushNotification, params: [String: Any]) async throws -> Bool
    /// Sends a new device token for `credential`; `true` when the server accepted it.
    func setDeviceToken(credential: PushCredential, deviceToken: String, params: [String: Any]) async throws -> Bool
    /// Registers `credential` with its server; `true` when the server accepted it.
    func register(credential: PushCredential, params: [String: Any]) async throws -> Bool
}

/// The network steps of PingAM's push protocol, which an app provides to ``PingAMPushHandler``.
public protocol PingAMNetwork: Sendable {
    /// Registers `credential` (its registration endpoint, the URI's `messageId`, `challenge`,
    /// `amlbCookie`, the device's `deviceId` and `deviceName` in `params`).
    func register(credential: PushCredential, params: [String: Any]) async throws -> Bool
    /// Answers `notification` (`approved` says how; `challengeResponse` or
    /// `authenticationMethod` in `params` when the type asks for one).
    func respond(credential: PushCredential, notification: PushNotification, approved: Bool, params: [String: Any]) async throws -> Bool
    /// Sends the new device token for `credential`.
    func updateDeviceToken(credential: PushCredential, deviceToken: String, params: [String: Any]) async throws -> Bool
}
