// On Apple's platforms `CFString` and the `kSecAttrAccessible…` constants come with Foundation;
// code written for Ping's Push module names them without importing anything else.
@_exported import typealias CofferMFACommons.CFString
@_exported import let CofferMFACommons.kSecAttrAccessibleWhenUnlockedThisDeviceOnly
@_exported import let CofferMFACommons.kSecAttrAccessibleWhenUnlocked
@_exported import let CofferMFACommons.kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
@_exported import let CofferMFACommons.kSecAttrAccessibleAfterFirstUnlock
@_exported import let CofferMFACommons.kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
@_exported import let CofferMFACommons.kSecAttrAccessibleAlways
@_exported import let CofferMFACommons.kSecAttrAccessibleAlwaysThisDeviceOnly
