import Synchronization

/// A seam that lets a test stop a ``KeychainStorageClient`` listing at the moment an attack
/// review held open with a debugger: just after the listing asked which provider process
/// answers, before it reads the item indexes and searches, so the test can restart the keyring
/// daemon there. Production code never sets it.
package enum KeychainListingFaults {
    /// Called, if set, after a listing's first ``SecretService/provider()`` question.
    package static let afterProviderCheck = Mutex<(@Sendable () -> Void)?>(nil)
}
