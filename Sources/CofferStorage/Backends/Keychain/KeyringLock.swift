import CLibSecret
import Crypto
import Foundation

/// The cross-process lock of what one user keeps in one keyring: every read-compare-write of
/// keyring items (a HOTP counter, a removal if unchanged, a key ring's creation or rotation)
/// holds it across its read and its write.
///
/// It follows what it protects, never the environment: the file is
/// `<home>/.local/share/coffer/locks/<name>@<bus>.lock`, where `<home>` is your home directory
/// as the password database names it (not `HOME`) and `<bus>` the id of the session bus the
/// Secret Service answers on (`org.freedesktop.DBus.GetId`: the bus daemon's own id, the same
/// for every process connected to it, whichever of its addresses and however
/// `DBUS_SESSION_BUS_ADDRESS` spells it). So a desktop terminal and an `su`, `ssh`
/// or cron shell of the same user that reach the same keyring take the same lock, whatever
/// their `XDG_RUNTIME_DIR`, `XDG_DATA_HOME`, `HOME`, `COFFER_HOME` or working directory; and a
/// keyring on another bus (another login's, a test's private session) has a lock of its own, so
/// a provider hanging there never holds up this one.
public struct KeyringLock: Sendable {
    /// The lock file.
    public let path: String

    /// The lock `name` (a client's service prefix, `keys` for the key store) of the keyring
    /// reached through the session bus.
    ///
    /// - Throws: ``KeychainError`` when the session bus cannot be reached (the keyring could
    ///   not be used either), ``StorageError`` when the lock directory cannot be used.
    public static func named(_ name: String, timeout: Duration = SecretService.defaultTimeout) async throws -> KeyringLock {
        let bus = try await busID(timeout: timeout)
        return KeyringLock(path: try DataDirectory.locks().appendingPathComponent("\(fileName(name))@\(bus).lock").path)
    }

    /// `name` when it can be part of a file name as it is; otherwise (a `/`, a leading `.`,
    /// anything unusual, or too long) `h-` and its SHA-256 in hex.
    static func fileName(_ name: String) -> String {
        let plain = name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte) || byte == 0x2e || byte == 0x5f || byte == 0x2d
        }
        if plain, !name.isEmpty, !name.hasPrefix("."), name.utf8.count <= 100 { return name }
        return "h-" + SHA256.hash(data: Data(name.utf8)).hexString
    }

    /// Runs `body` holding the lock, blocking the thread until no other process holds it (for
    /// synchronous APIs).
    public func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        try FileLock(path: path).withExclusiveLock(body)
    }

    /// Takes the lock without blocking a thread while waiting; held until released.
    public func exclusive() async throws -> FileLock.Held {
        try await FileLock(path: path).exclusive()
    }

    /// The session bus's id: 32 lowercase hex digits, checked, since it names a file.
    private static func busID(timeout: Duration) async throws(KeychainError) -> String {
        let id = try await BlockingCallRunner.run(timeout: timeout) { cancellable throws(SecretCallError) -> String in
            var error = coffer_secret_error()
            var found: UnsafeMutablePointer<CChar>?
            let status = coffer_secret_bus_id(cancellable, &found, &error)
            guard status == Int32(COFFER_SECRET_OK), let found else { throw SecretCallError(status: status, error: &error) }
            defer { free(found) }
            return String(cString: found)
        }
        guard id.utf8.count == 32, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw .failed(domain: "coffer", code: 0, message: "the session bus's id is not 32 hex digits")
        }
        return id
    }
}
