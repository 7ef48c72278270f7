import CofferPostgres
import CofferMFAEngine
import CofferOath
import CofferStorage
import Foundation
import PostgresNIO

/// The owner's HOTP counter memory for Ping's OATH storage: one row of
/// `coffer_oath_hotp_counters`, the JSON map of counters by key fingerprint sealed under the
/// owner and the storage's key ring, raised by compare-and-swap, so instances raising it at once
/// lose none of each other's counters.
extension PostgresOathStorage: HOTPCounterLedger {
    private static let identity = "oath/hotp-counters"

    /// Every remembered counter, by key fingerprint (none before the first removal).
    public func rememberedCounters() async throws -> [String: UInt64] {
        try await failing("read the HOTP counter record") { try await readCounters().map }
    }

    /// Raises the remembered counters; read again and retried when another instance raised them
    /// first.
    public func remember(_ more: [String: UInt64]) async throws {
        let owner = owner
        try await failing("record HOTP counters") {
            try await SealedCounterMap.raise(by: more, read: { try await readCounters() }) { raised, sealed in
                try await scope.write("record HOTP counters", sealing: [(try SealedCounterMap.encode(raised), Self.identity)]) { connection, next in
                    let query: PostgresQuery = if let sealed {
                        try "UPDATE coffer_oath_hotp_counters SET ledger = \(next[0]) WHERE owner = \(owner) AND ledger = \(sealed) RETURNING 1"
                    } else {
                        try "INSERT INTO coffer_oath_hotp_counters (owner, ledger) VALUES (\(owner), \(next[0])) ON CONFLICT (owner) DO NOTHING RETURNING 1"
                    }
                    return try await !self.scope.run(query, on: connection).isEmpty
                }
            }
        }
    }

    /// The counters and the sealed row they came from (`nil` when the owner has no row yet).
    private func readCounters() async throws -> (map: [String: UInt64], token: Data?) {
        let rows = try await scope.read("read the HOTP counter record", "SELECT ledger FROM coffer_oath_hotp_counters WHERE owner = \(owner)")
        guard let sealed = try rows.first?.decode(Data.self) else { return ([:], nil) }
        switch try await scope.open([(sealed, Self.identity)])[0] {
        case .success(let json):
            do { return (try SealedCounterMap.decode(json), sealed) } catch {
                throw OathStorageError.storageCorrupted("the record of HOTP counters is not a map of counters")
            }
        case .failure(let error):
            throw OathStorageError.storageCorrupted("the record of HOTP counters of \(owner) does not open (moved from another owner, or damaged): \(error)")
        }
    }

    private func failing<R>(_ operation: String, _ body: () async throws -> R) async throws -> R {
        do { return try await body() } catch let error as OathStorageError { throw error } catch {
            throw OathStorageError.storageFailure("Failed to \(operation): \(error)", error)
        }
    }
}
