import CofferStorage
import Foundation

/// The keyring's HOTP counter ledger: one item, `service` `<prefix>.counters`, its JSON sealed
/// and bound like every other record, read and raised holding the client's lock.
extension KeychainStorageClient: HOTPCounterLedger {
    private struct CounterRecord: Codable {
        var counters: [String: UInt64]
    }

    /// Every counter the keyring's ledger item remembers, by key fingerprint.
    public func rememberedCounters() throws -> [String: UInt64] {
        try diagnostics.attemptThrowing("read the HOTP counter ledger") { try readCounters() }
    }

    /// Raises the ledger item's counters, holding the client's lock while it reads and writes.
    public func remember(_ counters: [String: UInt64]) throws {
        guard !counters.isEmpty else { return }
        try diagnostics.attemptThrowing("remember HOTP counters") {
            try exclusively {
                let remembered = try readCounters()
                let raised = remembered.raised(by: counters)
                guard raised != remembered else { return }
                try storeItem(CounterRecord(counters: raised), identity: "counters", attributes: ["service": service("counters")],
                              label: "HOTP counters")
            }
        }
    }

    private func readCounters() throws -> [String: UInt64] {
        let attributes = ["service": service("counters")]
        let items = try search(attributes, loadSecrets: true)
        guard items.count <= 1 else { throw KeychainError.ambiguous(attributes: attributes, count: items.count) }
        guard let item = items.first else { return [:] }
        return try open(CounterRecord.self, item) { _ in "counters" }.counters
    }
}
