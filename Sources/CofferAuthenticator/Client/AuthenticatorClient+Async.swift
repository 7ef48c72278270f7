import CofferStorage
import Foundation

/// The client from async code, as GRDB offers `read` both ways: each call does the same work as
/// its synchronous twin, on a thread of its own off Swift's cooperative pool, so a storage that
/// blocks (SQLite's file lock, a keyring round trip, a PostgreSQL client waiting for its pool)
/// never holds one of the pool's few threads, however many calls wait at once. Write `await`
/// and Swift picks these.
extension AuthenticatorClient {
    /// Adds the account and mechanism(s) of a URI (``addAccount(uri:)``), off the cooperative pool.
    @discardableResult
    public func addAccount(uri: String) async throws(AuthenticatorError) -> AccountEntry {
        try await offPool { () throws(AuthenticatorError) in try self.addAccount(uri: uri) }
    }

    /// Adds the account of a URI again, replacing its mechanisms of the same types
    /// (``replaceAccount(uri:trashReason:)``), off the cooperative pool.
    public func replaceAccount(uri: String, trashReason: String = "replaced") async throws(AuthenticatorError)
        -> (entry: AccountEntry, replaced: [Mechanism], trashID: String?) {
        try await offPool { () throws(AuthenticatorError) in try self.replaceAccount(uri: uri, trashReason: trashReason) }
    }

    /// Every account with its mechanisms and notifications (``accounts()``), off the cooperative pool.
    public func accounts() async -> [AccountEntry] {
        await offPool { self.accounts() }
    }

    /// The accounts a query names (``entries(matching:)``), off the cooperative pool.
    public func entries(matching query: String?) async -> [AccountEntry] {
        await offPool { self.entries(matching: query) }
    }

    /// Removes an account with everything it owns (``removeAccount(_:)``), off the cooperative pool.
    @discardableResult
    public func removeAccount(_ account: Account) async throws(AuthenticatorError) -> String? {
        try await offPool { () throws(AuthenticatorError) in try self.removeAccount(account) }
    }

    /// The mechanism's code (``code(for:)``; a HOTP counter is stored first), off the cooperative pool.
    public func code(for mechanism: Mechanism) async throws(AuthenticatorError) -> OathCode {
        try await offPool { () throws(AuthenticatorError) in try self.code(for: mechanism) }
    }

    /// Renames an account (``rename(_:issuer:accountName:)``), off the cooperative pool.
    public func rename(_ account: Account, issuer: String?, accountName: String?) async throws(AuthenticatorError)
        -> (account: Account, trashID: String?) {
        try await offPool { () throws(AuthenticatorError) in try self.rename(account, issuer: issuer, accountName: accountName) }
    }

    /// Brings a trash entry back (``restore(trashID:replacing:)-neji``), off the cooperative pool.
    public func restore(trashID: String, replacing: Bool = false) async throws(AuthenticatorError) -> TrashEntry {
        try await offPool { () throws(AuthenticatorError) in try self.restore(trashID: trashID, replacing: replacing) }
    }

    /// Imports entries of an export file (``importEntries(_:overwrite:trashReason:)-gy22``), off the cooperative pool.
    public func importEntries(_ entries: [ImportEntry], overwrite: Bool, trashReason: String = "overwritten by import") async throws
        -> VaultImportReport {
        try await offPool { try self.importEntries(entries, overwrite: overwrite, trashReason: trashReason) }
    }

    /// Every OATH mechanism in the exported form (``exportAccounts()-4z1vx``), off the cooperative pool.
    public func exportAccounts() async -> (accounts: [TransferAccount], notExported: [String]) {
        await offPool { self.exportAccounts() }
    }

    /// Runs `work` on a thread of its own (`OffPoolExecutor.runBlocking`).
    private func offPool<T: Sendable, Failure: Error>(_ work: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        try await OffPoolExecutor.runBlocking(work)
    }
}
