import Foundation

/// What an import did.
public struct VaultImportReport: Sendable, Equatable {
    /// `issuer: account (type)` of each entry imported.
    public var imported: [String] = []
    /// Entries already stored: their account has a mechanism of that type with the same secret.
    public var skippedExisting: [String] = []
    /// Entries stored under a new name (`name (2)`, …) because an account of their name holds
    /// another secret. Also listed in ``imported``.
    public var renamed: [Renamed] = []
    /// Entries whose code is stored but whose details (note, groups, …) are not, each
    /// `title: why` (the stored account has another note; a note too long).
    public var detailsNotKept: [String] = []
    /// Entries of types Coffer does not support (mOTP, Yandex, …), not imported.
    public var unsupported: [String] = []
    /// Entries that could not be imported, each `title: why` (a secret that is not base32, an
    /// algorithm Coffer does not have, …).
    public var refused: [String] = []
    /// Remarks about the file as a whole (for example a multi-part export with parts missing).
    public var notes: [String] = []
    /// Entries imported under a new id, because the vault's id already belonged to another
    /// stored object (which is left as it was). Also listed in ``imported``.
    public var renumbered: [String] = []
    /// The mechanisms `overwrite` replaced, each as it was when it was taken out (what an undo
    /// keeps).
    public var replaced: [Mechanism] = []
    /// With the client's trash: each account whose mechanisms `overwrite` replaced, with the id
    /// of the trash entry that keeps them (``AuthenticatorClient/restore(trashID:replacing:)-neji``).
    public var trashed: [Trashed] = []

    /// Whether every entry of the file is stored with all it carried: nothing unsupported,
    /// refused, or with details left out.
    public var isComplete: Bool { unsupported.isEmpty && refused.isEmpty && detailsNotKept.isEmpty }

    /// An entry stored under a name of its own.
    public struct Renamed: Sendable, Equatable {
        /// The entry's title (`Issuer: account (type)`).
        public var title: String
        /// The name it is stored under, `Issuer: account (2)`.
        public var storedAs: String
        /// The name whose account holds another secret, `Issuer: account`.
        public var clashesWith: String
    }

    /// An account whose replaced mechanisms the trash keeps.
    public struct Trashed: Sendable, Equatable {
        /// The account as it is stored.
        public var account: Account
        /// The trash entry's id.
        public var id: String
    }
}

extension AuthenticatorClient {
    /// Imports Aegis vault entries (see ``importEntries(_:overwrite:trashReason:)-gy22``).
    public func importAegis(_ entries: [AegisVault.Entry], overwrite: Bool) throws -> VaultImportReport {
        try importEntries(entries.map(AegisVault.importEntry), overwrite: overwrite)
    }

    /// Adds the mechanism; when its id belongs to another stored object, which is never replaced,
    /// adds it under a new id instead and returns `true`.
    func addRenumberingOnClash(account: Account, mechanism: Mechanism, replacing: Bool) throws(AuthenticatorError) -> (renumbered: Bool, replaced: [Mechanism]) {
        do {
            return (false, try add(account: account, mechanism: mechanism, replacing: replacing))
        } catch {
            guard case .storageFailed(_, let cause) = error, case .uuidTaken? = cause as? StorageClientError else { throw error }
            var renumbered = mechanism
            renumbered.mechanismUUID = UUID().uuidString
            return (true, try add(account: account, mechanism: renumbered, replacing: replacing))
        }
    }

    /// Every OATH mechanism in the exported form (`TransferAccount`) that `AccountExport`
    /// writes in any `ExportFormat`, under the names shown for its account; and the titles of
    /// the push mechanisms, which no other authenticator can take.
    public func exportAccounts() -> (accounts: [TransferAccount], notExported: [String]) {
        var exported: [TransferAccount] = []
        var notExported: [String] = []
        for listed in accounts() {
            for mechanism in listed.mechanisms {
                if let account = TransferAccount(account: listed.account, mechanism: mechanism) {
                    exported.append(account)
                } else {
                    notExported.append(ImportEntry.printable("\(listed.account.shownIssuer): \(listed.account.shownAccountName) (\(mechanism.type.rawValue))"))
                }
            }
        }
        return (exported, notExported)
    }

    /// The Aegis entries of every OATH mechanism, and the titles of the push mechanisms, which
    /// have no Aegis form.
    public func exportAegis() -> (entries: [AegisVault.Entry], notExported: [String]) {
        let exported = exportAccounts()
        return (exported.accounts.compactMap(AegisVault.entry), exported.notExported)
    }
}
