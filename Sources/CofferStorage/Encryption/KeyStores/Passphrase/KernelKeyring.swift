import CKernelKeyring
import Crypto
import Foundation

/// The user's kernel keyring (`@u`, keyrings(7)): where a ``PassphraseKeyStore`` keeps the key a
/// passphrase derived, when asked to, for a time the user chooses. Keys there are readable by
/// this user only (and root), live in kernel memory (never on disk, never in swap), and expire.
enum KernelKeyring {
    /// Keeps `key` under `name` for `seconds`. Failure to keep it is not an error (the next
    /// command asks again), and is returned for the caller to log.
    @discardableResult
    static func store(_ key: SymmetricKey, name: String, seconds: UInt32) -> Int32? {
        let result = key.withUnsafeBytes { coffer_keyring_store(name, $0.baseAddress, $0.count, seconds) }
        return result == 0 ? nil : -result
    }

    /// The key kept under `name`, or `nil` when there is none (or it expired).
    static func key(named name: String) -> SymmetricKey? {
        var buffer = [UInt8](repeating: 0, count: 64)
        defer { buffer.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        let length = coffer_keyring_read(name, &buffer, buffer.count)
        guard length == 32 else { return nil }
        return SymmetricKey(data: buffer.prefix(32))
    }

    /// Forgets the key kept under `name`. Returns whether there was one.
    @discardableResult
    static func remove(named name: String) -> Bool {
        coffer_keyring_remove(name) == 0
    }
}
