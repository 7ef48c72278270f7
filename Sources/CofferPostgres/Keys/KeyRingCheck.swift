import CofferStorage
import Foundation
import Logging
import PostgresNIO

/// How a write makes sure it sealed under the newest key of its key ring (the shared one, or
/// the owner's own).
///
/// Each instance remembers which key is primary (``DatabaseKeyStore``), and learns of another
/// instance's rotation from its notification or when the remembered id expires. A write does not
/// trust that: it seals under the key it remembers and its SQL stores the result only when that
/// key is still the newest one in `coffer_keys`, checked in the same statement or transaction.
/// When it is not, the write forgets the remembered id, seals again and retries. So a write that
/// starts after a rotation was acknowledged always uses the new key, and no extra round trip is
/// made for the check.
package enum KeyRingCheck {
    /// How often a write seals again before giving up (a rotation between each try).
    static let attempts = 4

    /// The key id in a sealed envelope's header.
    package static func keyID(of sealed: Data) throws -> UInt32 {
        do {
            return try SealedEnvelope(parsing: sealed).keyID
        } catch {
            throw PostgresStorageError(.server, "A value was sealed into something that is not a Coffer envelope (\(error)).")
        }
    }

    /// The key ids of sealed fields, which must all be the newest.
    package static func keyIDs(of sealed: [Data]) throws -> Set<Int> {
        Set(try sealed.map { Int(try keyID(of: $0)) })
    }

    /// The error for a write that found a newer key every time it tried.
    package static func keptRotating(alias: String, during operation: String) -> PostgresStorageError {
        PostgresStorageError(.keyRingRotating, "The key ring '\(alias)' was rotated \(attempts) times while trying to \(operation); "
            + "nothing was written. Try again when rotations have stopped.")
    }

    /// Runs `attempt` (which seals, then writes with ``require(_:alias:of:on:logger:)`` or its own
    /// check) again while it finds that a newer key exists, forgetting the remembered primary
    /// each time.
    package static func retrying<R>(alias: String, keys: DatabaseKeyStore, during operation: String,
                            _ attempt: () async throws -> R) async throws -> R {
        for _ in 0..<attempts {
            do {
                return try await attempt()
            } catch let error as PostgresStorageError where error.code == .keyRingRotating {
                keys.forgetPrimary(alias)
            }
        }
        throw keptRotating(alias: alias, during: operation)
    }

    /// Inside a write's transaction: throws (rolling it back, for ``retrying(alias:keys:during:_:)``
    /// to seal again) unless every one of `sealed` is under the newest key of `alias`.
    package static func require(_ sealed: [Data], alias: String, of keys: DatabaseKeyStore, on connection: PostgresConnection, logger: Logger) async throws {
        let ids = try keyIDs(of: sealed)
        guard !ids.isEmpty else { return }
        let rows = try await connection.rows("""
            SELECT coalesce(max(id), 0) FROM coffer_keys WHERE owner = \(keys.ringOwner) AND alias = \(alias)
            """, logger: logger)
        let newest = try rows.first?.decode(Int.self) ?? 0
        guard ids == [newest] else { throw stale }
    }

    /// What an attempt throws when it sealed under a key that is no longer the newest.
    package static let stale = PostgresStorageError(.keyRingRotating, "A newer key is in the key ring; sealing again.")
}
