import Foundation
import Logging

/// Ping's default storage for a module's data, on any Linux machine: the OS keyring where there
/// is one, an encrypted file where there is not.
///
/// Ping's modules keep their tokens and cookies in `KeychainStorage` (`ACCESS_TOKEN_STORAGE`,
/// `COOKIE_STORAGE`). A server, a container or an SSH session has no Secret Service, and a
/// keychain storage there fails every call. ``make(account:fileName:directory:logger:)``
/// therefore chooses, in this order:
///
/// 1. **The encrypted file, when it already exists** (`fileName` in ``DataDirectory/default``):
///    data once kept there stays there, whatever the keyring does later.
/// 2. **The OS keyring, when it is usable now**: Ping's default, `KeychainStorage(account:
///    encryptor: SecuredKeyEncryptor() ?? NoEncryptor(), cacheable: true)`.
/// 3. **Otherwise an ``EncryptedFileStorage``** named `fileName`, its key where
///    ``KeyStoreSelection`` records it (a 0600 key file on a machine without a keyring, or the
///    TPM or a passphrase once `coffer key move` put it there). The choice is logged.
///
/// The file names are the spec's Android defaults: `com.pingidentity.sdk.v1.tokens` and
/// `com.pingidentity.sdk.v1.cookies`.
public enum PlatformDefaultStorage {
    /// Where ``make(account:fileName:directory:logger:)`` would keep the data now.
    public enum Choice: Sendable, Equatable {
        /// The OS keyring, under the account.
        case keyring(account: String)
        /// An encrypted file.
        case encryptedFile(URL)
    }

    /// Where the data for `account` / `fileName` would be kept now (see the type's discussion).
    /// Checking the keyring blocks for at most 3 seconds on one that does not answer.
    public static func choice(account: String, fileName: String, directory: URL? = nil) -> Choice {
        let file = (directory ?? DataDirectory.default).appendingPathComponent(fileName)
        var status = stat()
        if lstat(file.path, &status) == 0 { return .encryptedFile(file) }
        if SecretService(timeout: .seconds(3)).usabilityProblem() == nil { return .keyring(account: account) }
        return .encryptedFile(file)
    }

    /// The storage for `account` (in the keyring) or `fileName` (in `directory`, by default
    /// ``DataDirectory/default``), chosen as the type's discussion says. Both keep a memory copy,
    /// as Ping's default does.
    public static func make<T: Codable & Sendable>(
        account: String, fileName: String, directory: URL? = nil,
        logger: Logger = Logger(label: "org.coffer.storage")
    ) -> StorageDelegate<T> {
        switch choice(account: account, fileName: fileName, directory: directory) {
        case .keyring(let account):
            return KeychainStorage<T>(account: account, encryptor: SecuredKeyEncryptor() ?? NoEncryptor(), cacheable: true)
        case .encryptedFile(let file):
            logger.notice("keeping the data in an encrypted file: the OS keyring cannot be used here, or the file already exists",
                          metadata: ["file": "\(file.path)"])
            return EncryptedFileStorage<T>(fileName: fileName, directory: directory, strongBoxPreferred: true,
                                           cacheStrategy: .cache, logger: logger)
        }
    }
}
