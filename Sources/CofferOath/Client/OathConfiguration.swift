import CofferMFACommons
import Foundation
import Synchronization

/// The Oath client's settings, filled in with ``build(_:)`` or ``OathClient/createClient(configure:)``:
///
/// ```swift
/// let config = OathConfiguration.build { config in
///     config.storage = OathKeychainStorage()
///     config.enableCredentialCache = false
///     config.logger = customLogger
/// }
/// ```
///
/// The properties are kept under a lock, so a configuration can be shared between tasks.
public final class OathConfiguration: Sendable {
    private struct Values {
        var storage: (any OathStorage)?
        var policyEvaluator: MfaPolicyEvaluator?
        var encryptionEnabled = true
        var timeoutMs: TimeInterval = 15.0
        var enableCredentialCache = false
        var logger: any CofferMFACommons.Logger = LogManager.logger
    }

    private let values = Mutex(Values())

    /// Where credentials are kept; `nil` means an ``OathKeychainStorage`` with its defaults,
    /// made (and written back here) when the client is created.
    public var storage: (any OathStorage)? {
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

    /// Kept for Ping's API; read by nothing.
    public var timeoutMs: TimeInterval {
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

    /// The defaults.
    public init() {}

    /// A configuration with the defaults, changed by `configure`.
    public static func build(_ configure: (OathConfiguration) -> Void) -> OathConfiguration {
        let configuration = OathConfiguration()
        configure(configuration)
        return configuration
    }
}
