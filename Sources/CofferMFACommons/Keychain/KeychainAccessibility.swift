/// Apple's `CFString`, for the Oath and Push keychain storages' `accessibility` parameters:
/// on Linux a plain `String`.
public typealias CFString = String

/// Readable only while the keyring is unlocked, and never copied to another device: what every
/// Secret Service item is on Linux (Coffer never shows an unlock prompt; a locked keyring is
/// refused with `accessDenied`). The default of Ping's storages.
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "ak"
/// On Apple platforms, readable while unlocked and copied in backups. On Linux the same as
/// ``kSecAttrAccessibleWhenUnlockedThisDeviceOnly``: keyring items are never copied by Coffer.
public let kSecAttrAccessibleWhenUnlocked: CFString = "aku"
/// On Apple platforms, readable after the first unlock until restart. On Linux the keyring
/// must be unlocked at each use, so this is the same as ``kSecAttrAccessibleWhenUnlockedThisDeviceOnly``.
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// As ``kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly``, copied in backups on Apple platforms.
public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
/// On Apple platforms, only while a passcode is set. On Linux the same as
/// ``kSecAttrAccessibleWhenUnlockedThisDeviceOnly`` (the login password protects the keyring).
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
