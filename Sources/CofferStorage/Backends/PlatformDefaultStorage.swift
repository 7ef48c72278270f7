import Foundation
import Logging

/// Ping's default storage for a module's data, on any Linux machine: the OS keyring where there
/// is one, an encrypted file where there is not.
///
/// Ping's modules keep their tokens and cookies in `KeychainStorage` (`ACCESS_TOKEN_STORAGE`,
/// `COOKIE_STORAGE`). A server, a container or an SSH session has no Secret Service, and a
/// keychain storage there fails every call. ``make(account:fileName:directory:logger:)``
/// chooses once and records the choice in `<fileName>.backend` beside the file, as
/// ``KeyStoreSelection`` records where a key is; processes choosing at the same moment all take
/// the first one's choice (the record is written under its lock):
///
/// 1. **The recorded choice**, when there is one. A recorded keyring that cannot be used now
///    gives a storage whose calls fail with ``KeychainError/unavailable(reason:)``: it never
///    switches to a file, which would leave a live session in the keyring that nothing reads or
///    deletes.
/// 2. Before the first choice, **the encrypted file when it already exists** (`fileName` in
///    ``DataDirectory/default``).
/// 3. Else **the OS keyring, when it is usable now**: Ping's default, `KeychainStorage(account:
///    encryptor: SecuredKeyEncryptor() ?? NoEncryptor(), cacheable: true)`.
/// 4. Else **an ``EncryptedFileStorage``** named `fileName`, its key where ``KeyStoreSelection``
///    records it (a 0600 key file on a machine without a keyring, or the TPM or a passphrase
///    once `coffer key move` put it there).
///
/// The choice is logged. The file names are the spec's Android defaults:
/// `com.pingidentity.sdk.v1.tokens` and `com.pingidentity.sdk.v1.cookies`.
public enum PlatformDefaultStorage {
    /// Where ``make(account:fileName:directory:logger:)`` keeps the data.
    public enum Choice: String, Sendable, Equatable {
        /// The OS keyring, under the account.
        case keyring
        /// An encrypted file.
        case encryptedFile = "file"
    }

    /// Why the choice cannot be made or read.
    public enum ChoiceError: Error, LocalizedError, Sendable {
        /// `fileName` cannot name a file in the data directory.
        case invalidFileName(StorageError)
        /// The record names neither `keyring` nor `file`.
        case unknownRecord(path: String, text: String)

        /// What is wrong and what to do.
        public var errorDescription: String? {
            switch self {
            case .invalidFileName(let cause): return cause.errorDescription
            case let .unknownRecord(path, _): return "\(path) does not say 'keyring' or 'file', as it should. Restore it."
            }
        }
    }

    /// Where the data for `account` / `fileName` is kept: the recorded choice, or the one the
    /// type's discussion describes, recorded now. Checking the keyring blocks for at most
    /// 3 seconds on one that does not answer.
    ///
    /// - Throws: ``ChoiceError``; ``StorageError`` when the record cannot be read or written
    ///   (a wrong owner, mode or link at its path included).
    public static func choice(account: String, fileName: String, directory: URL? = nil,
                              logger: Logger = Logger(label: "org.coffer.storage")) throws -> Choice {
        if let problem = FileName.validate(fileName) { throw ChoiceError.invalidFileName(problem) }
        let directory = directory ?? DataDirectory.default
        let record = RecordFile(directory.appendingPathComponent(fileName + ".backend"))
        let file = directory.appendingPathComponent(fileName)
        let text = try record.recordIfAbsent {
            var status = stat()
            if lstat(file.path, &status) == 0 { return Choice.encryptedFile.rawValue }
            if let problem = SecretService(timeout: .seconds(3)).usabilityProblem() {
                logger.notice("the OS keyring cannot be used; keeping the data in an encrypted file",
                              metadata: ["file": "\(file.path)", "reason": "\(problem)"])
                return Choice.encryptedFile.rawValue
            }
            return Choice.keyring.rawValue
        }
        guard let choice = Choice(rawValue: text) else { throw ChoiceError.unknownRecord(path: record.path, text: text) }
        return choice
    }

    /// The storage for `account` (in the keyring) or `fileName` (in `directory`, by default
    /// ``DataDirectory/default``), chosen as the type's discussion says. Both keep a memory copy,
    /// as Ping's default does. When the choice cannot be made (an unreadable record, a name that
    /// is not a file's), every call of the storage fails with the reason.
    public static func make<T: Codable & Sendable>(
        account: String, fileName: String, directory: URL? = nil,
        logger: Logger = Logger(label: "org.coffer.storage")
    ) -> StorageDelegate<T> {
        let chosen: Choice
        do {
            chosen = try choice(account: account, fileName: fileName, directory: directory, logger: logger)
        } catch {
            logger.error("the default storage cannot be chosen; every operation will fail until it can",
                         metadata: ["reason": "\(error)"])
            return StorageDelegate(delegate: UnusableStorage<T>(reason: error))
        }
        switch chosen {
        case .keyring:
            let encryptor: any Encryptor
            if let secured = SecuredKeyEncryptor() {
                encryptor = secured
            } else {
                logger.warning("no key can be kept for sealing; the keyring's own encryption is all the data has",
                               metadata: ["account": "\(account)"])
                encryptor = NoEncryptor()
            }
            return KeychainStorage<T>(account: account, encryptor: encryptor, cacheable: true)
        case .encryptedFile:
            return EncryptedFileStorage<T>(fileName: fileName, directory: directory, strongBoxPreferred: true,
                                           cacheStrategy: .cache, logger: logger)
        }
    }
}

/// Stands in for a storage that cannot be chosen: every call throws the reason.
struct UnusableStorage<T: Codable & Sendable>: Storage {
    let reason: any Error

    func save(item: T) async throws { throw reason }
    func get() async throws -> T? { throw reason }
    func delete() async throws { throw reason }
}
