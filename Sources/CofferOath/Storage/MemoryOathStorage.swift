import CofferMFACommons
import CofferStorage
import Synchronization

/// Credentials in memory, for tests and previews: nothing is written anywhere, secrets
/// included (they live in this process's memory, unencrypted, until it ends). Its HOTP counter
/// memory (`HOTPCounterLedger`) lasts as long as the storage does. Ids are told apart byte for
/// byte, as SQLite and the keyring tell them (`"é"` composed and decomposed are two credentials).
public final class MemoryOathStorage: OathCounterStorage, HOTPCounterLedger {
    private let credentials = Mutex<[StoredID: OathCredential]>([:])
    private let counters = Mutex<[String: UInt64]>([:])

    /// An empty storage.
    public init() {}

    public func storeOathCredential(_ credential: OathCredential) async throws {
        credentials.withLock { $0[credential.storedID] = credential }
    }

    public func retrieveOathCredential(credentialId: String) async throws -> OathCredential? {
        credentials.withLock { $0[credentialId.storedID] }
    }

    /// Every credential, oldest first (then by id).
    public func getAllOathCredentials() async throws -> [OathCredential] {
        credentials.withLock { Array($0.values) }.sorted(by: OathCredential.oldestFirst)
    }

    public func removeOathCredential(credentialId: String) async throws -> Bool {
        credentials.withLock { $0.removeValue(forKey: credentialId.storedID) != nil }
    }

    public func clearOathCredentials() async throws {
        credentials.withLock { $0.removeAll() }
    }

    /// Reads, changes and stores the credential under the storage's lock.
    public func updateOathCredential(credentialId: String, _ change: @Sendable (OathCredential) throws -> OathCredential) async throws -> OathCredential? {
        try credentials.withLock { stored in
            guard let credential = stored[credentialId.storedID] else { return nil }
            let next = try change(credential)
            try credential.requireSameCredential(next)
            stored[credentialId.storedID] = next
            return credential
        }
    }
}

extension MemoryOathStorage {
    /// Every remembered HOTP counter, by key fingerprint.
    public func rememberedCounters() async throws -> [String: UInt64] {
        counters.withLock { $0 }
    }

    /// Raises the remembered counters (a lower one never replaces a higher).
    public func remember(_ more: [String: UInt64]) async throws {
        counters.withLock { $0 = $0.raised(by: more) }
    }
}

extension OathCredential {
    /// This credential with its counter one on; refuses a counter that cannot move on.
    package func advanced() throws -> OathCredential {
        guard counter < Int.max else { throw OathError.invalidParameterValue("the HOTP counter cannot move past \(Int.max)") }
        var next = self
        next.counter += 1
        return next
    }
}
