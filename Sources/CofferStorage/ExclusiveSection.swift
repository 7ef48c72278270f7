/// A section that only one holder of a stored value runs at a time, across every process (and,
/// for a database, every machine) that uses the same value: what a read-refresh-write holds, so
/// that many callers needing a new token make one refresh instead of racing with a rotating
/// refresh token.
///
/// Every ``StorageDelegate`` offers it (``StorageDelegate/withExclusiveSection(_:)``):
/// - ``FileStorage`` and ``EncryptedFileStorage`` with an `flock` on a lock file beside the data
///   file (`.<name>.section.lock`, 0600);
/// - ``KeychainStorage`` with a lock file of the keyring it uses (``KeyringLock``), which every
///   process of the user reaching the same keyring takes;
/// - `PostgresStorage` with a PostgreSQL advisory lock on its namespace and key, which every
///   replica sharing the database takes;
/// - ``MemoryStorage`` within its process only, which is all that can see it.
///
/// A storage of your own gets the same when the `Storage` it wraps conforms to this protocol;
/// otherwise the section excludes other tasks of this process only (through the caller's own
/// ordering), and two processes sharing such a storage can each refresh.
public protocol ExclusiveSection: Sendable {
    /// Runs `body` while no other holder of this value's section runs theirs, waiting without
    /// blocking a thread until it may.
    func withExclusiveSection<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws -> R
}
