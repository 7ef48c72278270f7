import CofferMFAEngine
import CofferStorage
import Crypto
import Foundation

/// Where a store remembers the highest counter each HOTP key was used with, after the
/// mechanism that used it is gone (removed, replaced, purged from a trash), so that the same
/// secret added again starts where it left off and no code its server has seen is issued again.
///
/// Keys are named by their `OathKeyIdentity` fingerprint (one name for every spelling of one
/// secret); counters are only ever raised. Each built-in store keeps its ledger with its
/// records, so the memory follows the accounts wherever they are kept: ``SealedCounterLedgerFile``
/// beside a SQLite store, one sealed item in the keyring (``KeychainStorageClient``), one sealed
/// row per owner in PostgreSQL. ``StorageMigration`` carries it from one store to the next.
public protocol HOTPCounterLedger: Sendable {
    /// Every remembered counter, by key fingerprint.
    ///
    /// - Throws: When the ledger cannot be read. A ledger that cannot be read is never taken for
    ///   an empty one: callers stop what would need it.
    func rememberedCounters() throws -> [String: UInt64]

    /// Raises the remembered counter of each key to at least the given one (a lower one never
    /// replaces a higher), atomically against every other process writing the same ledger.
    func remember(_ counters: [String: UInt64]) throws
}

extension HOTPCounterLedger {
    /// Remembers the counters of the HOTP mechanisms among `mechanisms`.
    public func remember(_ mechanisms: [Mechanism]) throws {
        let counters = HOTPCounters.of(mechanisms)
        if !counters.isEmpty { try remember(counters) }
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

    /// `counters` raised by `more`, key by key.
    package static func merged(_ counters: [String: UInt64], _ more: [String: UInt64]) -> [String: UInt64] {
        counters.merging(more, uniquingKeysWith: max)
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
