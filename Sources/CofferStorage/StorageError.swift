import Foundation

/// Why a storage operation failed.
///
/// Messages name the file or item and say what to do; they never contain stored values.
public enum StorageError: Error, Sendable {
    /// The stored bytes at `location` cannot be read back as a value. The file is left exactly as
    /// it was so that nothing is lost; move it aside or restore it from a backup.
    case corrupted(location: String, reason: String)

    /// The stored value was sealed for another item (`found`) than the one read (`expected`):
    /// the file or keyring entry was copied or swapped. Nothing is returned.
    case identityMismatch(location: String, expected: String, found: String)

    /// The stored bytes at `location` could not be decrypted: they were changed, truncated, or
    /// sealed with a key this key store does not hold. `cause` is the encryptor's error. The file
    /// is left exactly as it was.
    case decryptionFailed(location: String, cause: any Error)

    /// A name given to a storage cannot be used (for example a file name with a `/`).
    case invalidName(String, reason: String)

    /// The value could not be turned into bytes before it was stored. Nothing was written.
    case encodingFailed(type: String, reason: String)

    /// A file-system call failed. `code` is the `errno` value.
    case io(operation: String, path: String, code: Int32)

    /// A file or directory Coffer was to use is not safe to trust: another user owns it, can
    /// write to it (or read key material in it), or it is a symbolic link or not the kind of file
    /// expected (``TrustProblem`` says which). `owner` is its uid and `mode` its permission bits.
    /// Nothing was read or written through it. See ``FileTrust``.
    case untrusted(path: String, owner: UInt32, mode: UInt32, reason: TrustProblem)

    /// The value at `location` is sealed under key `keyID` of `keyAlias`, which the key store no
    /// longer holds (a key file deleted or not restored). Replacing the value, or sealing
    /// anything under a new key, would lose it: nothing was written and no key was made.
    case keyMissing(location: String, keyAlias: String, keyID: UInt32)

    /// The value at `location` was written with another kind of encryptor than the one reading
    /// it: sealed (a Coffer envelope) and read without encryption (``NoEncryptor``,
    /// `FileStorage`), or written in plain JSON and read with an encryptor. Nothing is wrong with
    /// the data; it was left as it is.
    case encryptorChanged(location: String, writtenSealed: Bool)
}

extension StorageError: LocalizedError {
    /// What went wrong and what to do, naming the storage, the key or the file; never a stored value.
    public var errorDescription: String? {
        switch self {
        case let .corrupted(location, reason):
            return "The stored data at \(location) is damaged or was not written by Coffer (\(reason)). "
                + "It was left untouched: move it aside or restore it from a backup, then save again."
        case let .identityMismatch(location, expected, found):
            return "The data at \(location) belongs to '\(found)', not '\(expected)': it was copied or swapped. "
                + "It was left untouched: put the right data back there, or move this aside."
        case let .decryptionFailed(location, cause):
            var reason = cause
            if case .failedToDecrypt(let inner?)? = cause as? EncryptorError { reason = inner }
            let detail = (reason as? LocalizedError)?.errorDescription ?? String(describing: reason)
            return "Could not decrypt \(location): \(detail). It was left untouched: restore the file or the key "
                + "it was sealed with (for example after moving it from another machine)."
        case let .invalidName(name, reason):
            return "The storage name '\(name)' cannot be used: \(reason)."
        case let .encodingFailed(type, reason):
            return "A value of type \(type) could not be encoded (\(reason)); nothing was stored."
        case let .io(operation, path, code) where code == ENOENT:
            // Which part is missing: the directory named, or the one a file was to go in.
            let parent = FileTrust.parentDirectory(of: path)
            let missing = operation.contains("directory") || parent.isEmpty || access(parent, F_OK) == 0 ? path : parent
            return "Create \(missing) first (`mkdir -p`), or name a place that exists: it does not exist "
                + "(could not \(operation) \(path))."
        case let .io(operation, path, code) where code == ENOSPC || code == EDQUOT:
            return "Free some space on the disk that holds \(path): it is full (could not \(operation) it). Nothing was changed."
        case let .io(operation, path, code) where code == EACCES || code == EPERM || code == EROFS:
            let place = FileTrust.parentDirectory(of: path).isEmpty ? "." : FileTrust.parentDirectory(of: path)
            let why = code == EROFS ? "it is on a read-only file system" : "you may not write there"
            return "Name a place of your own instead of \(place): \(why) (could not \(operation) \(path))."
        case let .io(operation, path, code):
            return "Could not \(operation) \(path): \(String(cString: strerror(code))) (errno \(code)). "
                + "Check that the directory exists, is writable by you and the disk is not full."
        case let .keyMissing(location, alias, id):
            return "\(location) is sealed under key \(id) of '\(alias)', which the key store no longer holds. Nothing was "
                + "stored and no new key was made, so the value is not lost: restore the key (its file, or keyring item, "
                + "from a backup), or delete the value first if it is truly gone."
        case let .untrusted(path, owner, mode, reason):
            return FileTrust.advice(path: path, owner: owner, mode: mode, reason: reason)
        case let .encryptorChanged(location, true):
            return "\(location) was written sealed by an encryptor, and is read here without one (NoEncryptor, FileStorage): "
                + "read it with the encryptor it was written with. To keep it unsealed from now on, read it with that encryptor "
                + "and save it with the new storage (or delete it and save again). It was left untouched."
        case let .encryptorChanged(location, false):
            return "\(location) was written in plain JSON, without an encryptor, and is read here with one: read it without "
                + "(NoEncryptor, FileStorage). To seal it from now on, read it that way and save it with the sealing storage "
                + "(or delete it and save again). It was left untouched."
        }
    }
}

extension StorageError: CustomStringConvertible {
    /// The same text as ``errorDescription``, so `print(error)` and string interpolation read well.
    public var description: String { errorDescription ?? "StorageError" }

    /// The message a person reads (the same as `errorDescription`), under the name Ping's SDK
    /// gives it.
    public var errorMessage: String { description }
}
