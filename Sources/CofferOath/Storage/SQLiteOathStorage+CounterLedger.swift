import CofferMFAEngine
import CofferStorage
import Foundation
import GRDB

/// The storage's HOTP counter memory: one row of `coffer_hotp_counters`, the JSON map of
/// counters by key fingerprint sealed with the storage's encryptor and bound to its place, raised
/// by compare-and-swap, so processes raising it at once lose none of each other's counters.
extension SQLiteOathStorage: HOTPCounterLedger {
    private static let field = "oath/hotp-counters"

    /// Every remembered counter, by key fingerprint (none before the first removal).
    public func rememberedCounters() async throws -> [String: UInt64] {
        try await run("read the HOTP counter record") { try await read().map }
    }

    /// Raises the remembered counters; read again and retried when another process raised them
    /// first.
    public func remember(_ more: [String: UInt64]) async throws {
        try await run("record HOTP counters") {
            try await SealedCounterMap.raise(by: more, read: { try await read() }) { raised, sealed in
                let next = try await sealer.sealing([(try SealedCounterMap.encode(raised), Self.field)])[0]
                return try await database.write { db in
                    if let sealed {
                        try db.execute(sql: "UPDATE coffer_hotp_counters SET ledger = ? WHERE id = 1 AND ledger = ?", arguments: [next, sealed])
                    } else {
                        try db.execute(sql: "INSERT OR IGNORE INTO coffer_hotp_counters (id, ledger) VALUES (1, ?)", arguments: [next])
                    }
                    return db.changesCount == 1
                }
            }
        }
    }

    /// The counters and the sealed row they came from (`nil` when there is no row yet).
    private func read() async throws -> (map: [String: UInt64], token: Data?) {
        let sealed = try await database.read { db in
            try Data.fetchOne(db, sql: "SELECT ledger FROM coffer_hotp_counters WHERE id = 1")
        }
        guard let sealed else { return ([:], nil) }
        switch await sealer.opening([(sealed, Self.field)])[0] {
        case .success(let json):
            do { return (try SealedCounterMap.decode(json), sealed) } catch {
                throw OathStorageError.storageCorrupted("the record of HOTP counters is not a map of counters")
            }
        case .failure(let error):
            if case .identityMismatch? = error as? StorageError {
                throw OathStorageError.storageCorrupted("the record of HOTP counters does not belong in this place (moved from another row)")
            }
            throw error
        }
    }
}
