import CofferMFAEngine
import CofferStorage
import Foundation

/// The storage's HOTP counter memory: one keyring item (`service` + `.counters`), the JSON map of
/// counters by key fingerprint sealed and bound like a secret, read and raised holding the
/// keyring lock every write of this storage holds.
extension OathKeychainStorage: HOTPCounterLedger {
    private var counterAttributes: [String: String] {
        ["service": service + ".counters", "accessGroup": securityOptions.accessGroup ?? ""]
    }

    private var counterField: String { "oath/\(service)/hotp-counters" }

    /// Every remembered counter, by key fingerprint (none before the first removal).
    public func rememberedCounters() async throws -> [String: UInt64] {
        try await run("read the HOTP counter record") { try await read() }
    }

    /// Raises the remembered counters under the keyring lock.
    public func remember(_ more: [String: UInt64]) async throws {
        guard !more.isEmpty else { return }
        try await run("record HOTP counters") {
            try await items.exclusively {
                let counters = try await read()
                let raised = counters.raised(by: more)
                guard raised != counters else { return }
                try await items.keyring.store(try await items.seal(try SealedCounterMap.encode(raised), boundTo: counterField), attributes: counterAttributes,
                                              label: "OATH HOTP counters: \(service)", contentType: "application/octet-stream")
            }
        }
    }

    private func read() async throws -> [String: UInt64] {
        guard let item = try await items.single(counterAttributes) else { return [:] }
        guard !item.isLocked else { throw KeychainError.locked }
        guard let sealed = item.secret else { throw OathStorageError.storageCorrupted("the record of HOTP counters is empty") }
        let json: String
        do {
            json = try await items.open(sealed, boundTo: counterField)
        } catch is SealedKeyringItems.Misplaced {
            throw OathStorageError.storageCorrupted("the record of HOTP counters does not belong to this storage")
        }
        do { return try SealedCounterMap.decode(json) } catch {
            throw OathStorageError.storageCorrupted("the record of HOTP counters is not a map of counters")
        }
    }
}
