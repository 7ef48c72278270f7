import CofferStorage
import Foundation

/// A HOTP counter ledger's map (counters by key fingerprint) kept as one sealed JSON value and
/// raised by compare-and-swap: the one way the ledgers of Ping's storages (SQLite, PostgreSQL)
/// read, merge and write it, and the one JSON form every ledger stores.
package enum SealedCounterMap {
    /// The map in `json`; a value that is not a map of counters is damage, never an empty map.
    package static func decode(_ json: String) throws -> [String: UInt64] {
        guard let map = try? JSONDecoder().decode([String: UInt64].self, from: Data(json.utf8)) else {
            throw StorageError.corrupted(location: "the record of HOTP counters", reason: "it is not a map of counters")
        }
        return map
    }

    /// The JSON of `map`.
    package static func encode(_ map: [String: UInt64]) throws -> String {
        String(decoding: try JSONEncoder().encode(map), as: UTF8.self)
    }

    /// Raises the stored map by `more`: `read` gives the map and a token of what was read (`nil`
    /// when nothing is stored yet); `swap` stores the raised map only if the stored value is
    /// still that token's, and says whether it did. Read again until a swap succeeds, so
    /// writers at once lose none of each other's counters; a map already as high changes nothing.
    package static func raise<Token: Sendable>(
        by more: [String: UInt64], read: () async throws -> (map: [String: UInt64], token: Token?),
        swap: ([String: UInt64], Token?) async throws -> Bool
    ) async throws {
        guard !more.isEmpty else { return }
        for _ in 0..<1_000 {
            let (map, token) = try await read()
            let raised = map.raised(by: more)
            if raised == map { return }
            if try await swap(raised, token) { return }
            try Task.checkCancellation()
        }
        // Writers do not take this long; a swap that never matches is a trigger or a policy.
        throw StorageError.io(operation: "raise the record of HOTP counters (its update kept matching nothing: a trigger or row policy?)",
                              path: "coffer_hotp_counters", code: EAGAIN)
    }
}
