import Foundation

/// Apple's `CFString`, for the Oath and Push keychain storages' `accessibility` parameters:
/// on Linux a plain `String`.
public typealias CFString = String

// The values are Apple's raw strings, so a value stored or logged by a Ping app reads the same.

/// Readable only while the keyring is unlocked, and never copied to another device: what every
/// Secret Service item is on Linux (Coffer never shows an unlock prompt; a locked keyring is
/// refused with `accessDenied`). The default of Ping's storages.
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
/// On Apple platforms, readable while unlocked and copied in backups. On Linux the same as
/// ``kSecAttrAccessibleWhenUnlockedThisDeviceOnly``: keyring items are never copied by Coffer.
public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
/// On Apple platforms, readable after the first unlock until restart. On Linux the keyring
/// must be unlocked at each use, so this is the same as ``kSecAttrAccessibleWhenUnlockedThisDeviceOnly``.
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// As ``kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly``, copied in backups on Apple platforms.
public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
/// On Apple platforms, only while a passcode is set. On Linux the same as
/// ``kSecAttrAccessibleWhenUnlockedThisDeviceOnly`` (the login password protects the keyring).
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
/// On Apple platforms (deprecated there), readable even while the device is locked. Refused on
/// Linux: the Secret Service serves no item of a locked keyring (``KeychainAccessibility``).
public let kSecAttrAccessibleAlways: CFString = "dk"
/// As ``kSecAttrAccessibleAlways``, never copied to another device. Refused on Linux.
public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"

/// What each of Apple's `kSecAttrAccessible…` values means for a keyring item on Linux.
public enum KeychainAccessibility {
    /// The values a keyring storage honours: each means "while the keyring is unlocked, on this
    /// machine only", which covers what the value asks for.
    public static let honoured: Set<CFString> = [
        kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleWhenUnlocked,
        kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlock,
        kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly,
    ]

    /// Checks that a keyring storage can honour `value`.
    ///
    /// - Throws: ``KeychainAccessibilityError`` for ``kSecAttrAccessibleAlways`` and
    ///   ``kSecAttrAccessibleAlwaysThisDeviceOnly`` (items readable while locked) and for a value
    ///   that is not one of Apple's.
    public static func check(_ value: CFString) throws(KeychainAccessibilityError) {
        guard !honoured.contains(value) else { return }
        if value == kSecAttrAccessibleAlways || value == kSecAttrAccessibleAlwaysThisDeviceOnly {
            throw .readableWhileLocked(value)
        }
        throw .unknown(value)
    }
}

/// Why a keyring storage refuses an `accessibility` value.
public enum KeychainAccessibilityError: Error, LocalizedError, Sendable, Equatable {
    /// `kSecAttrAccessibleAlways…`: the item should be readable while the keyring is locked,
    /// which the Secret Service never allows.
    case readableWhileLocked(CFString)
    /// Not one of Apple's `kSecAttrAccessible…` values.
    case unknown(CFString)

    /// What was refused, and what to use instead.
    public var errorDescription: String? {
        switch self {
        case .readableWhileLocked:
            return "kSecAttrAccessibleAlways asks for items readable while the keyring is locked, which the Secret Service never allows. Use kSecAttrAccessibleWhenUnlockedThisDeviceOnly."
        case .unknown(let value):
            return "'\(String(value.prefix(32)).unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(String.init).joined())' is not one of Apple's kSecAttrAccessible values. Use kSecAttrAccessibleWhenUnlockedThisDeviceOnly."
        }
    }
}
