import CofferMFAEngine
import CofferStorage
import Crypto
import Foundation

/// The legacy models' side of a counter ledger: the counters of `Mechanism`s, and blocking forms for
/// the synchronous `StorageClient` world.
extension HOTPCounterLedger {
    /// Remembers the counters of the HOTP mechanisms among `mechanisms`.
    public func remember(_ mechanisms: [Mechanism]) async throws {
        let counters = HOTPCounters.of(mechanisms)
        if !counters.isEmpty { try await remember(counters) }
    }

    /// `HOTPCounterLedger.rememberedCounters()` for synchronous code (the `StorageClient`
    /// world), blocking the calling thread while it runs off the cooperative pool.
    package func rememberedCountersBlocking() throws -> [String: UInt64] {
        try SyncBridge.run { try await self.rememberedCounters() }
    }

    /// `HOTPCounterLedger.remember(_:)` for synchronous code, blocking the calling thread.
    package func rememberBlocking(_ mechanisms: [Mechanism]) throws {
        let counters = HOTPCounters.of(mechanisms)
        if !counters.isEmpty { try SyncBridge.run { try await self.remember(counters) } }
    }

    /// `HOTPCounterLedger.remember(_:)` for synchronous code, blocking the calling thread.
    package func rememberBlocking(_ counters: [String: UInt64]) throws {
        if !counters.isEmpty { try SyncBridge.run { try await self.remember(counters) } }
    }
}

/// HOTP counters by key fingerprint: what ledgers hold.
package enum HOTPCounters {
    /// The highest counter of each HOTP key among `mechanisms`.
    package static func of(_ mechanisms: [Mechanism]) -> [String: UInt64] {
        var counters: [String: UInt64] = [:]
        for mechanism in mechanisms where mechanism.type == .hotp {
            guard let key = mechanism.keyIdentity?.fingerprint else { continue }
            counters[key] = max(counters[key] ?? 0, mechanism.counter)
        }
        return counters
    }


    /// The highest counter `remembered` holds for `mechanism`'s key, under its fingerprint or
    /// under a name an earlier version of Coffer gave it (see ``legacyNames(of:)``).
    package static func floor(for mechanism: Mechanism, in remembered: [String: UInt64]) -> UInt64 {
        guard mechanism.type == .hotp, let identity = mechanism.keyIdentity else { return 0 }
        var floor = remembered[identity.fingerprint] ?? 0
        for name in legacyNames(of: mechanism) { floor = max(floor, remembered[name] ?? 0) }
        return floor
    }

    /// The names Coffer before the HMAC-key identity gave `mechanism`'s key: the SHA-256 of its
    /// bytes as spelled. Every spelling HMAC takes for the same key is tried (the bytes without
    /// trailing zeros, then with each number of zeros up to the block), so a counter recorded
    /// under a padded spelling still counts; a key longer than the block has one spelling.
    package static func legacyNames(of mechanism: Mechanism) -> [String] {
        guard let bytes = try? Base32.decode(mechanism.secret) else { return [] }
        let block = mechanism.algorithm.hash.blockSize
        guard bytes.count <= block else { return [SHA256.hash(data: bytes).hexString] }
        var stripped = bytes
        while stripped.last == 0 { stripped.removeLast() }
        return (0...(block - stripped.count)).map { zeros in
            SHA256.hash(data: stripped + Data(repeating: 0, count: zeros)).hexString
        }
    }
}
