import CofferMFACommons

/// How ``OathKeychainStorage`` protects its items, with Ping's presets. On Linux:
/// - `accessibility`: each of Apple's values means "while the keyring is unlocked, on this machine
///   only" (see `kSecAttrAccessibleWhenUnlockedThisDeviceOnly`), except `kSecAttrAccessibleAlways`
///   and `…AlwaysThisDeviceOnly` (readable while locked) and values that are not Apple's: a
///   storage with one refuses every call with ``OathStorageError/accessDenied(_:)``
///   (`KeychainAccessibility`);
/// - `requireBiometrics`: Linux has no biometric-gated keyring, so a storage with it refuses
///   every call with ``OathStorageError/accessDenied(_:)`` rather than store without it;
///   ``biometric`` and ``biometricOnly`` are therefore refused;
/// - `requireDevicePasscode` and `biometricPrompt`: kept, used by nothing (as in Ping);
/// - `accessGroup`: an `accessGroup` attribute on every item and query, so groups see only
///   their own items.
public struct OathKeychainSecurityOptions: Sendable {
    /// When items may be read (see above).
    public let accessibility: String
    /// Ask for biometric authentication: refused on Linux.
    public let requireBiometrics: Bool
    /// Used by nothing.
    public let requireDevicePasscode: Bool
    /// Used by nothing.
    public let biometricPrompt: String?
    /// The group whose items this storage sees.
    public let accessGroup: String?

    /// Options; the defaults are ``standard``.
    public init(
        accessibility: CFString = kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
        requireBiometrics: Bool = false,
        requireDevicePasscode: Bool = false,
        biometricPrompt: String? = nil,
        accessGroup: String? = nil
    ) {
        self.accessibility = accessibility
        self.requireBiometrics = requireBiometrics
        self.requireDevicePasscode = requireDevicePasscode
        self.biometricPrompt = biometricPrompt
        self.accessGroup = accessGroup
    }

    /// While the keyring is unlocked; no biometrics, no group.
    public static let standard = OathKeychainSecurityOptions()
    /// Ping's biometric preset (with passcode): refused on Linux.
    public static let biometric = OathKeychainSecurityOptions(
        requireBiometrics: true, requireDevicePasscode: true, biometricPrompt: "Authenticate to access OATH credentials")
    /// Ping's biometric-only preset: refused on Linux.
    public static let biometricOnly = OathKeychainSecurityOptions(
        requireBiometrics: true, biometricPrompt: "Biometric authentication is required to access OATH credentials")

    /// ``standard`` in the group `accessGroup`.
    public static func shared(accessGroup: String) -> OathKeychainSecurityOptions {
        OathKeychainSecurityOptions(accessGroup: accessGroup)
    }
}
