/// Where OATH credentials are kept, as Ping's Oath module declares it. Implementations must be
/// safe to call from many tasks at once.
///
/// The client relies on these rules (Ping's own storages and Coffer's keep them):
/// - ``storeOathCredential(_:)`` is an upsert by id: the client stores a credential again to
///   persist a HOTP counter, a lock or an edit;
/// - ``retrieveOathCredential(credentialId:)`` returns the credential with its secret, `nil`
///   when there is none, and throws ``OathStorageError/storageCorrupted(_:)`` for metadata
///   without its secret;
/// - ``removeOathCredential(credentialId:)`` answers `false` for a missing id;
///   ``clearOathCredentials()`` on an empty store succeeds.
public protocol OathStorage: Sendable {
    /// Stores `credential`, replacing the one with the same id.
    func storeOathCredential(_ credential: OathCredential) async throws
    /// The credential with this id, secret included, or `nil`.
    func retrieveOathCredential(credentialId: String) async throws -> OathCredential?
    /// Every credential.
    func getAllOathCredentials() async throws -> [OathCredential]
    /// Removes the credential; `false` when there was none.
    func removeOathCredential(credentialId: String) async throws -> Bool
    /// Removes every credential.
    func clearOathCredentials() async throws
}

/// An ``OathStorage`` that can move a HOTP counter on in one atomic step, so two requests for a
/// code (from two tasks or two processes) never get the same one. Every storage Coffer ships
/// conforms; ``OathClient`` uses it when the storage does, and otherwise serialises the
/// read-increment-store per credential within the client (which cannot reach other processes).
public protocol OathCounterStorage: OathStorage {
    /// Atomically: reads the credential, checks it is an unlocked HOTP credential (`check`
    /// throws to refuse), stores it with `counter + 1`, and returns it as read (its counter is
    /// the one the code uses). `nil` when there is no credential with this id.
    func advanceOathCounter(credentialId: String, check: @Sendable (OathCredential) throws -> Void) async throws -> OathCredential?
}
