/// Ping's `biometricAvailable` policy: the device can authenticate its owner biometrically.
///
/// Linux has no system biometric API an application can ask to authenticate its user (fprintd
/// verifies for PAM, not for a library), so this policy is never compliant here, as on an
/// iPhone without Face ID or Touch ID: a credential that requires it is stored locked.
public struct BiometricAvailablePolicy: MfaPolicy {
    /// `biometricAvailable`.
    public static let policyName = "biometricAvailable"
    /// ``policyName``.
    public var name: String { Self.policyName }

    /// The policy.
    public init() {}

    /// `false`: no biometric authentication an application can use on Linux.
    public func evaluate(data: [String: Any]?) async throws -> Bool { false }
}
