import CofferMFACommons
import Foundation
import Synchronization

/// The Push client's settings, filled in with ``build(_:)`` or ``PushClient/createClient(configure:)``.
/// The properties are kept under a lock, so a configuration can be shared between tasks.
public final class PushConfiguration: Sendable {
    private struct Values {
        var storage: (any PushStorage)?
        var policyEvaluator: MfaPolicyEvaluator?
        var encryptionEnabled = true
        var timeoutMs = 15_000
        var enableCredentialCache = false
        var logger: any CofferMFACommons.Logger = LogManager.logger
        var handlers: [String: any PushHandler] = [:]
        var ignoredHandlerKeys: [String] = []
        /// The values set for the ignored keys, kept to be read back as they were set.
        var ignoredHandlers: [String: SetAside] = [:]
        var notificationCleanupConfig = NotificationCleanupConfig.default()
    }

    private let values = Mutex(Values())

    /// Where credentials, notifications and the token are kept; `nil` means a
    /// ``PushKeychainStorage`` with its defaults, made (and written back here) when the client
    /// is created.
    public var storage: (any PushStorage)? {
        get { values.withLock { $0.storage } }
        set { values.withLock { $0.storage = newValue } }
    }

    /// The policies credentials are checked against; `nil` means `biometricAvailable` and
    /// `deviceTampering`.
    public var policyEvaluator: MfaPolicyEvaluator? {
        get { values.withLock { $0.policyEvaluator } }
        set { values.withLock { $0.policyEvaluator = newValue } }
    }

    /// Kept for Ping's API; read by nothing (Coffer's storages always seal secrets).
    public var encryptionEnabled: Bool {
        get { values.withLock { $0.encryptionEnabled } }
        set { values.withLock { $0.encryptionEnabled = newValue } }
    }

    /// Kept for Ping's API: the network step belongs to the app's handlers on Linux.
    public var timeoutMs: Int {
        get { values.withLock { $0.timeoutMs } }
        set { values.withLock { $0.timeoutMs = newValue } }
    }

    /// Keep credentials in memory after the first read (secrets included). Off by default.
    public var enableCredentialCache: Bool {
        get { values.withLock { $0.enableCredentialCache } }
        set { values.withLock { $0.enableCredentialCache = newValue } }
    }

    /// Where the client logs (default: `LogManager.logger`). A swift-log `Logger` works too.
    public var logger: any CofferMFACommons.Logger {
        get { values.withLock { $0.logger } }
        set { values.withLock { $0.logger = newValue } }
    }

    /// Handlers by platform id (`pingam`), replacing the default ``PingAMPushHandler`` for the
    /// same id. Values that are not a ``PushHandler`` are read back as they were set, as Ping's
    /// are, and ignored by the client, with a warning when it is created.
    public var customPushHandlers: [String: Any] {
        get {
            values.withLock { values in
                values.ignoredHandlers.mapValues(\.value).merging(values.handlers.mapValues { $0 as Any }) { $1 }
            }
        }
        set {
            var handlers: [String: any PushHandler] = [:]
            var ignored: [String: SetAside] = [:]
            for (key, value) in newValue {
                if let handler = value as? any PushHandler { handlers[key] = handler } else { ignored[key] = SetAside(value: value) }
            }
            values.withLock { $0.handlers = handlers; $0.ignoredHandlerKeys = ignored.keys.sorted(); $0.ignoredHandlers = ignored }
        }
    }

    /// A value set in ``customPushHandlers`` that is not a handler.
    // @unchecked Sendable: the value is never read or changed by Coffer, only handed back to
    // the caller who set it, and it is stored and read only under the configuration's lock.
    struct SetAside: @unchecked Sendable {
        let value: Any
    }

    /// How stored notifications are purged (default: the newest 100 per credential after each
    /// notification, and of all on `close()`).
    public var notificationCleanupConfig: NotificationCleanupConfig {
        get { values.withLock { $0.notificationCleanupConfig } }
        set { values.withLock { $0.notificationCleanupConfig = newValue } }
    }

    /// The defaults.
    public init() {}

    /// A configuration with the defaults, changed by `configure`.
    public static func build(_ configure: (PushConfiguration) -> Void) -> PushConfiguration {
        let configuration = PushConfiguration()
        configure(configuration)
        return configuration
    }

    var handlers: [String: any PushHandler] { values.withLock { $0.handlers } }
    var ignoredHandlerKeys: [String] { values.withLock { $0.ignoredHandlerKeys } }
}
