import CofferPostgres
import CofferAuthenticator
import CofferMFAEngine
import CofferStorage
import Foundation
import PostgresNIO

/// The owner's HOTP counter ledger: one row of `coffer_hotp_counters`, its JSON sealed and
/// bound to the owner, raised under a row lock in one transaction, so instances and processes
/// raising it at once lose none of each other's counters.
extension PostgresStorageClient: HOTPCounterLedger {
    /// Every counter the ledger remembers, by key fingerprint.
    public func rememberedCounters() async throws -> [String: UInt64] {
        let owner = self.owner
        let rows = try await query("read the HOTP counter ledger", "SELECT ledger FROM coffer_hotp_counters WHERE owner = \(owner)")
        guard let sealed = try rows.first?.decode(Data.self) else { return [:] }
        return try await open(sealed)
    }

    /// Raises the remembered counter of each key to at least the given one.
    public func remember(_ counters: [String: UInt64]) async throws {
        guard !counters.isEmpty else { return }
        let owner = self.owner
        try await transaction("remember HOTP counters") { connection in
            try await connection.rows("""
                INSERT INTO coffer_hotp_counters (owner, ledger) VALUES (\(owner), ''::bytea) ON CONFLICT (owner) DO NOTHING
                """, logger: self.database.logger)
            var remembered: [String: UInt64] = [:]
            for row in try await connection.rows("SELECT ledger FROM coffer_hotp_counters WHERE owner = \(owner) FOR UPDATE",
                                                 logger: self.database.logger) {
                let sealed = try row.decode(Data.self)
                if !sealed.isEmpty { remembered = try await self.open(sealed) }
            }
            let raised = remembered.raised(by: counters)
            guard raised != remembered else { return }
            let json = String(decoding: try JSONEncoder().encode(raised), as: UTF8.self)
            let sealed = try await self.sealer.sealing([(json, self.ledgerField)])[0]
            try await connection.rows("UPDATE coffer_hotp_counters SET ledger = \(sealed) WHERE owner = \(owner)", logger: self.database.logger)
        }
    }

    private var ledgerField: String { OwnerBinding.scope(owner) + "hotp-counters" }

    private func open(_ sealed: Data) async throws -> [String: UInt64] {
        guard !sealed.isEmpty else { return [:] }
        let fields = [(sealed: sealed, field: ledgerField)]
        let json = try checked(fields, await sealer.opening(fields)).text(ledgerField)
        return try JSONDecoder().decode([String: UInt64].self, from: Data(json.utf8))
    }
}
