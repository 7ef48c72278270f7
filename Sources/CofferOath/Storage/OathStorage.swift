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

/// An ``OathStorage`` that can change a stored credential in one atomic step: read it, compute
/// its new value, store that, with no other writer in between (across processes too). So two
/// requests for a HOTP code never get the same one, and a lock set by a policy never undoes a
/// counter another process moved meanwhile. Every storage Coffer ships conforms; ``OathClient``
/// uses it when the storage does, and otherwise serialises the read-increment-store per
/// credential within the client (which cannot reach other processes).
public protocol OathCounterStorage: OathStorage {
    /// Atomically: reads the credential, stores what `change` makes of it (the same id and
    /// secret; `change` throws to refuse, and nothing is stored), and returns the credential as
    /// read. `nil` when there is no credential with this id.
    func updateOathCredential(credentialId: String, _ change: @Sendable (OathCredential) throws -> OathCredential) async throws -> OathCredential?
}

extension OathCounterStorage {
    /// Atomically: reads the credential, checks it (`check` throws to refuse), stores it with
    /// `counter + 1`, and returns it as read (its counter is the one the code uses). `nil` when
    /// there is no credential with this id.
    public func advanceOathCounter(credentialId: String, check: @Sendable (OathCredential) throws -> Void) async throws -> OathCredential? {
        try await updateOathCredential(credentialId: credentialId) { current in
            try check(current)
            return try current.advanced()
        }
    }
}

extension OathCredential {
    /// Throws unless `next` is this credential changed, not another one (same id and secret).
    package func requireSameCredential(_ next: OathCredential) throws {
        guard next.id == id, next.secret == secret else {
            throw OathStorageError.storageFailure("An update changed the credential's id or secret; nothing was stored")
        }
    }
}
