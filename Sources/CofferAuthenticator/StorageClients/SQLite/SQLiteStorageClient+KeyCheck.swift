import Foundation
import CofferMFAEngine
import GRDB
import CofferStorage

/// The store's key check, and bringing rows written before `MechanismBinding` under it.
extension SQLiteStorageClient {
    /// The field the key check is sealed under.
    static let keyCheckField = "keyCheck"

    /// `nil` when the encryptor's key opens the store's key check. A store without one gets one
    /// now, but only after its first sealed field (if any) is shown to open with this key: a
    /// store written under a key that is missing now must not be sealed under a new one.
    func findKeyProblem() -> (any Error)? {
        do {
            if let sealed = try database.read({ try Data.fetchOne($0, sql: "SELECT sealed FROM keyCheck WHERE id = 1") }) {
                _ = try sealer.open(sealed, for: Self.keyCheckField)
                return nil
            }
            let existing = try database.read { db -> (sealed: Data, field: String)? in
                if let row = try Row.fetchOne(db, sql: MechanismRow.select + "LIMIT 1") {
                    return sealedFields(of: try MechanismRow(row, store: path))[0]
                }
                if let row = try Row.fetchOne(db, sql: NotificationRow.select + "LIMIT 1") {
                    let stored = try NotificationRow(row, store: path)
                    return (stored.sealedChallenge, Self.field(stored.notification))
                }
                return nil
            }
            if let existing { _ = try sealer.open(existing.sealed, for: existing.field) }
            // The store's first seal: the one place a key may be made.
            let sealed = try FieldSealer(encryptor: encryptor).seal("Coffer key check", for: Self.keyCheckField)
            try database.write { db in
                try db.execute(sql: "INSERT INTO keyCheck (id, sealed) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", arguments: [sealed])
            }
            // Another process may have made its key check first, under another key: the one kept
            // is the one that counts.
            if let kept = try database.read({ try Data.fetchOne($0, sql: "SELECT sealed FROM keyCheck WHERE id = 1") }), kept != sealed {
                _ = try sealer.open(kept, for: Self.keyCheckField)
            }
            return nil
        } catch {
            return error
        }
    }

    /// Throws ``StorageClientError/keyUnavailable(cause:)`` while the key cannot be used,
    /// checking again first (the key may have been restored).
    func requireKey() throws {
        if case .usable = keyState.withLock({ $0 }) { return }
        if let problem = checkKey() { throw StorageClientError.keyUnavailable(cause: problem) }
    }

    /// Checks the key against the store now, remembers the answer and returns the problem; with
    /// a usable key, brings rows written before the binding under it.
    @discardableResult
    func checkKey() -> (any Error)? {
        let problem = findKeyProblem()
        keyState.withLock { $0 = problem.map(KeyState.unusable) ?? .usable }
        if let problem {
            diagnostics.record(problem, operation: "key check", message: "the store's key cannot be used; nothing new will be sealed")
        } else {
            bindLegacyRows()
        }
        return problem
    }

    /// Re-seals the secrets of rows written before `MechanismBinding` (bound to their UUID
    /// only) under the full binding, each by compare-and-swap on its sealed bytes. Rows that do
    /// not open are left as they are (and counted when read).
    func bindLegacyRows() {
        _ = diagnostics.attempt("bind legacy rows") {
            // Rows whose columns cannot be decoded are left for the readers to count.
            // A literal, not a parameter, so SQLite can use the partial index on it (v3).
            let rows = try database.read { try Row.fetchAll($0, sql: MechanismRow.select + "WHERE binding = \(MechanismBinding.legacy)") }
                .compactMap { try? MechanismRow($0, store: path) }
            guard !rows.isEmpty else { return }
            let opened = sealer.open(rows.map { sealedFields(of: $0)[0] })
            for (row, secret) in zip(rows, opened) {
                guard case .success(let text) = secret, let type = MechanismType(rawValue: row.type),
                      let algorithm = OathAlgorithm(rawValue: row.algorithm) else { continue }
                let bound = Mechanism(
                    mechanismUUID: row.uuid, issuer: row.issuer, accountName: row.accountName, type: type,
                    secret: text, algorithm: algorithm, digits: row.digits, period: row.period,
                    counter: UInt64(bitPattern: row.counter))
                let sealed = try sealer.seal(text, for: MechanismBinding.secretIdentity(bound))
                try database.write { db in
                    try db.execute(sql: "UPDATE mechanism SET secret = ?, binding = ? WHERE mechanismUUID = ? AND binding = ? AND secret = ?",
                                   arguments: [sealed, MechanismBinding.full, bound.mechanismUUID, MechanismBinding.legacy, row.secret])
                }
            }
        }
    }
}

/// What a ``SQLiteStorageClient`` knows about its key.
enum KeyState {
    case unchecked
    case usable
    case unusable(any Error)
}

/// What belongs with these accounts and lives beside the database (a trash entry, the HOTP
/// counter ledger), sealed with the store's own key.
extension SQLiteStorageClient {
    /// Seals `data` with the store's key, after checking that the key opens the store: while it
    /// cannot (the key file is missing, the keyring holds another key), nothing is sealed, so
    /// nothing ends up under a second key.
    ///
    /// - Throws: ``StorageClientError/keyUnavailable(cause:)`` while the key cannot be used;
    ///   the encryptor's error when sealing fails.
    public func sealCompanion(_ data: Data) throws -> Data {
        try requireKey()
        let encryptor = sealer.encryptor
        return try SyncBridge.run { try await encryptor.encrypt(data: data) }
    }

    /// Opens what ``sealCompanion(_:)`` sealed.
    ///
    /// - Throws: The encryptor's error: the data is damaged, or sealed under another key.
    public func openCompanion(_ sealed: Data) throws -> Data {
        let encryptor = self.encryptor
        return try SyncBridge.run { try await encryptor.decrypt(data: sealed) }
    }
}
