/// Where a store remembers the highest counter each HOTP key was used with, after the credential
/// that used it is gone (removed, replaced, purged from a trash), so that the same secret added
/// again starts where it left off and no code its server has seen is issued again.
///
/// Both authenticator generations keep one: ForgeRock's `AuthenticatorClient` and Ping's
/// `OathClient` read it before they store a HOTP credential and raise it before they take one
/// out. Keys are named by a fingerprint of the HMAC key as HMAC uses it (one name for every
/// spelling of one secret, and no way back to the secret); counters are only ever raised.
///
/// Every store Coffer ships keeps its ledger with its records, so the memory follows the
/// accounts wherever they are kept: a sealed file beside a SQLite store, one sealed keyring item,
/// one sealed row per owner in PostgreSQL, a table of the SQLite file of Ping's storage. A store
/// of your own conforms by keeping the map somewhere that survives the process:
///
/// ```swift
/// actor CounterFile: HOTPCounterLedger {
///     private var counters: [String: UInt64] = [:]
///     func rememberedCounters() async throws -> [String: UInt64] { counters }
///     func remember(_ more: [String: UInt64]) async throws {
///         counters.merge(more, uniquingKeysWith: max)  // a lower counter never replaces a higher
///     }
/// }
/// ```
public protocol HOTPCounterLedger: Sendable {
    /// Every remembered counter, by key fingerprint.
    ///
    /// - Throws: When the ledger cannot be read. A ledger that cannot be read is never taken for
    ///   an empty one: callers stop what would need it.
    func rememberedCounters() async throws -> [String: UInt64]

    /// Raises the remembered counter of each key to at least the given one (a lower one never
    /// replaces a higher), atomically against every other process writing the same ledger.
    func remember(_ counters: [String: UInt64]) async throws
}

/// A ledger's map of counters by key fingerprint.
extension Dictionary where Key == String, Value == UInt64 {
    /// These counters raised by `more`, key by key: what ``HOTPCounterLedger/remember(_:)`` keeps.
    public func raised(by more: [String: UInt64]) -> [String: UInt64] {
        merging(more, uniquingKeysWith: Swift.max)
    }
}
