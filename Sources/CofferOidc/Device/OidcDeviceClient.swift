import CofferStorage
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs a user in on a machine without a browser, with the device authorization grant
/// (RFC 8628): the user approves on another device, at an address and with a code this client
/// is given to show; meanwhile it polls the token endpoint, and stores the tokens in the
/// configuration's storage once the user approves. The shape of Ping's `OidcDeviceClient`.
///
/// ```swift
/// let client = OidcDeviceClient(config: config)
/// for try await status in try await client.deviceAuthorization() {
///     switch status {
///     case .started(let codes): print("Visit \(codes.verificationUri) and enter \(codes.userCode)")
///     case .polling: break
///     case .success(let user): print("Signed in", try await user.token().get().scope ?? "")
///     case .accessDenied: print("Refused")
///     case .expired: print("Too late: start again")
///     }
/// }
/// ```
///
/// Better than Ping's: the codes' own expiry ends the polling even when the provider never
/// says `expired_token`; tokens that cannot be stored end the stream with an error instead of
/// a success; the tokens are stored in the order of the session's other operations
/// (``OidcClient/token()``, ``OidcClient/revoke()``); and the device code appears in no
/// `description`, log line or error.
public final class OidcDeviceClient: Sendable {
    private let config: OidcClientConfig

    /// The RFC's names.
    enum Constants {
        static let deviceCode = "device_code"
        static let grantType = "urn:ietf:params:oauth:grant-type:device_code"
        static let authorizationPending = "authorization_pending"
        static let slowDown = "slow_down"
        static let accessDenied = "access_denied"
        static let expiredToken = "expired_token"
    }

    /// A client for `config` (its client id, scopes, storage and discovery endpoint).
    public init(config: OidcClientConfig) {
        self.config = config
    }

    /// Asks the provider for device and user codes, then polls until the user approves,
    /// refuses or the codes expire.
    ///
    /// - Returns: a stream that yields ``DeviceFlowStatus/started(_:)`` first, then
    ///   ``DeviceFlowStatus/polling(pollCount:pollInterval:nextPollAt:)`` after each poll the user
    ///   has not answered, and ends with `.success`, `.accessDenied` or `.expired` (or an error
    ///   the provider or the storage gave). Cancelling the task that reads it stops the polling.
    /// - Throws: ``OidcError`` when the provider has no device authorization endpoint or
    ///   refuses the request.
    public func deviceAuthorization() async throws -> AsyncThrowingStream<DeviceFlowStatus, any Error> {
        try await config.oidcInitialize()
        let url = try config.endpoint(\.deviceAuthorizationEndpoint, named: "device_authorization_endpoint")
        let (data, status) = try await config.postForm(to: url, ["scope": config.scopes.sorted().joined(separator: " ")])
        guard status == 200 else { throw OidcError.apiError(code: status, message: OidcError.answer(data)) }
        let codes: DeviceAuthorizationResponse
        do {
            codes = try JSONDecoder().decode(DeviceAuthorizationResponse.self, from: data)
        } catch {
            throw OidcError.unknown(message: "The device authorization endpoint's answer is not one (RFC 8628 §3.2)")
        }
        config.logger.i("Device authorization started")
        let config = self.config
        return AsyncThrowingStream { continuation in
            let task = Task {
                continuation.yield(.started(codes))
                do {
                    continuation.yield(try await Self.poll(codes, config: config) { continuation.yield($0) })
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Polls until an outcome: the tokens stored (`.success`), `.accessDenied` or `.expired`.
    private static func poll(
        _ codes: DeviceAuthorizationResponse, config: OidcClientConfig, progress: (DeviceFlowStatus) -> Void
    ) async throws -> DeviceFlowStatus {
        // The provider's numbers, kept to what a person waits for: a poll every 1 to 60 s, codes
        // that live at most a day.
        let deadline = Date().addingTimeInterval(Double(min(max(codes.expiresIn, 1), 86_400)))
        let base = min(max(codes.interval, 1), 60)
        var interval = base
        var polls = 0
        var failures = 0
        while true {
            try await Task.sleep(for: .seconds(interval))
            guard Date() < deadline else { return .expired }
            let answer: (Data, Int)
            do {
                answer = try await config.postForm(
                    to: try config.endpoint(\.tokenEndpointIfPresent, named: "token_endpoint"),
                    [OidcClient.Constants.grant_type: Constants.grantType, Constants.deviceCode: codes.deviceCode])
                failures = 0
            } catch let error as OidcError {
                throw error
            } catch {
                // The network: wait longer each time (up to a minute), until the codes expire.
                failures += 1
                config.logger.w("Polling the token endpoint failed; trying again", error: error)
                interval = min(60, base << min(failures, 4))
                polls += 1
                progress(.polling(pollCount: polls, pollInterval: interval, nextPollAt: Date().addingTimeInterval(Double(interval))))
                continue
            }
            let (data, status) = answer
            if status == 200 {
                try await OidcClient(config: config).store(signedIn: try OidcClientConfig.token(from: data))
                config.logger.i("Device authorization approved; tokens stored")
                return .success(OidcUser(config: config))
            }
            let object = (try? JSONSerialization.jsonObject(with: data.prefix(65_536))) as? [String: Any]
            switch object?["error"] as? String {
            case Constants.authorizationPending:
                break
            case Constants.slowDown:
                // RFC 8628 §3.5: 5 seconds more, from now on.
                interval = min(60, interval + 5)
            case Constants.accessDenied:
                return .accessDenied
            case Constants.expiredToken:
                return .expired
            default:
                throw OidcError.apiError(code: status, message: OidcError.answer(data))
            }
            polls += 1
            progress(.polling(pollCount: polls, pollInterval: interval, nextPollAt: Date().addingTimeInterval(Double(interval))))
        }
    }

    /// Deletes the stored tokens and revokes them at the provider.
    public func revoke() async {
        await OidcClient(config: config).revoke()
    }

    /// The signed-in user, when tokens are stored.
    public func user() async -> (any User)? {
        guard (try? await config.storage.get()) != nil else { return nil }
        return OidcUser(config: config)
    }
}
