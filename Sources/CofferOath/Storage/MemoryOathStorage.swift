import CofferStorage
import Synchronization

/// Credentials in memory, for tests and previews: nothing is written anywhere, secrets
/// included (they live in this process's memory, unencrypted, until it ends). Its HOTP counter
/// memory (`HOTPCounterLedger`) lasts as long as the storage does.
public final class MemoryOathStorage: OathCounterStorage, HOTPCounterLedger {
    private let credentials = Mutex<[String: OathCredential]>([:])
    private let counters = Mutex<[String: UInt64]>([:])

    /// An empty storage.
    public init() {}

    public func storeOathCredential(_ credential: OathCredential) async throws {
        credentials.withLock { $0[credential.id] = credential }
    }

    public func retrieveOathCredential(credentialId: String) async throws -> OathCredential? {
        credentials.withLock { $0[credentialId] }
    }

    /// Every credential, oldest first (then by id).
    public func getAllOathCredentials() async throws -> [OathCredential] {
        credentials.withLock { Array($0.values) }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    public func removeOathCredential(credentialId: String) async throws -> Bool {
        credentials.withLock { $0.removeValue(forKey: credentialId) != nil }
    }

    public func clearOathCredentials() async throws {
        credentials.withLock { $0.removeAll() }
    }

    /// Reads, changes and stores the credential under the storage's lock.
    public func updateOathCredential(credentialId: String, _ change: @Sendable (OathCredential) throws -> OathCredential) async throws -> OathCredential? {
        try credentials.withLock { stored in
            guard let credential = stored[credentialId] else { return nil }
            let next = try change(credential)
            try credential.requireSameCredential(next)
            stored[credentialId] = next
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
