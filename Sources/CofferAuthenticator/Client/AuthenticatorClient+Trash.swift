import CofferStorage
import Foundation

/// An entry put in the trash before what it keeps is taken out, to be rewritten with what was
/// finally taken (a HOTP counter moved meanwhile) or forgotten when nothing was.
struct PendingTrashEntry {
    let trash: any AccountTrash
    let id: String
    let account: Account
    let reason: String
    let trashedAt: Date

    /// Rewrites the entry with `taken`; forgets it when nothing was taken, unless `keepingEmpty`
    /// (a removed account with no mechanisms is still restorable by its names).
    func finish(with taken: [Mechanism], keepingEmpty: Bool = false) throws(AuthenticatorError) {
        do {
            if taken.isEmpty, !keepingEmpty { return try trash.remove(id) }
            try trash.update(id, account: account, mechanisms: taken, reason: reason, trashedAt: trashedAt)
        } catch {
            throw .storageFailed(operation: "keep what was taken in the trash", cause: error)
        }
    }
}

extension AuthenticatorClient {
    /// Puts `account` and `mechanisms` in the trash before they are taken out; `nil` without a
    /// trash, or when there is nothing to keep (unless `always`).
    func keepInTrash(_ account: Account?, _ mechanisms: [Mechanism], reason: String,
                     always: Bool = false) throws(AuthenticatorError) -> PendingTrashEntry? {
        guard let trash, let account, always || !mechanisms.isEmpty else { return nil }
        let now = Date()
        do {
            let id = try trash.put(account, mechanisms, reason: reason, now: now)
            return PendingTrashEntry(trash: trash, id: id, account: account, reason: reason, trashedAt: now)
        } catch {
            throw .storageFailed(operation: "keep it in the trash (nothing was changed)", cause: error)
        }
    }

    /// Gives `account` new shown names (`nil` leaves one as it is; a name equal to the one the
    /// issuer gave clears the shown one), in one step of the storage client, so a lock or
    /// removal by another process meanwhile is neither undone nor brought back. With a
    /// ``trash``, the old names are kept there first; `trashID` names the entry.
    ///
    /// - Throws: ``AuthenticatorError/invalidName(_:)`` for an empty name or one with control
    ///   characters (names are printed, and must not rewrite a terminal).
    public func rename(_ account: Account, issuer: String?, accountName: String?) throws(AuthenticatorError) -> (account: Account, trashID: String?) {
        let newIssuer = issuer?.trimmingCharacters(in: .whitespaces), newAccount = accountName?.trimmingCharacters(in: .whitespaces)
        guard newIssuer != nil || newAccount != nil else { throw .invalidName("give a new issuer, a new account name or both") }
        guard newIssuer?.isEmpty != true, newAccount?.isEmpty != true else { throw .invalidName("a name must not be empty") }
        for name in [newIssuer, newAccount].compactMap({ $0 }) where name.unicodeScalars.contains(where: MechanismURI.isControl) {
            throw .invalidName("a name must not contain control characters")
        }
        let shownIssuer = newIssuer ?? account.shownIssuer, shownName = newAccount ?? account.shownAccountName
        return try holdingNames { () throws(AuthenticatorError) in
            if let other = namesListed(asIssuer: shownIssuer, accountName: shownName, except: account) {
                throw .nameTaken(issuer: other.shownIssuer, accountName: other.shownAccountName)
            }
            let kept = try keepInTrash(account, [], reason: "renamed", always: true)
            let renamed = try updateAccount(account) { stored in
                if let newIssuer { stored.displayIssuer = newIssuer == stored.issuer ? nil : newIssuer }
                if let newAccount { stored.displayAccountName = newAccount == stored.accountName ? nil : newAccount }
            }
            return (renamed, kept?.id)
        }
    }

    /// Brings back the trash entry `trashID` (its id, any case) and forgets it: a removed or
    /// replaced account's mechanisms through this client (so a HOTP counter starts at the highest
    /// its secret was seen with), or an account's old names and details (a rename, a note an
    /// import replaced). Nothing comes back listed like another account
    /// (``AuthenticatorError/nameTaken(issuer:accountName:)``). With `replacing`, a
    /// mechanism of the same type the account has now is replaced (and goes to the trash).
    ///
    /// - Throws: ``AuthenticatorError/noTrash``; ``AuthenticatorError/notFound(_:)`` when no entry
    ///   has the id; ``AuthenticatorError/trashEntryUnreadable(id:why:)`` when it does not open;
    ///   ``AuthenticatorError/restoreClash(type:issuer:accountName:trashID:)`` when the account
    ///   has a mechanism of that type again and `replacing` is false. Nothing changes then.
    @discardableResult
    public func restore(trashID: String, replacing: Bool = false) throws(AuthenticatorError) -> TrashEntry {
        try holdingNames { () throws(AuthenticatorError) in try restoreHoldingNames(trashID: trashID, replacing: replacing) }
    }

    private func restoreHoldingNames(trashID: String, replacing: Bool) throws(AuthenticatorError) -> TrashEntry {
        guard let trash else { throw .noTrash }
        let id = trashID.lowercased()
        let entry: TrashEntry
        do {
            guard let found = try trash.entries().first(where: { $0.id == id }) else {
                if let waiting = try trash.damaged().first(where: { $0.name == id }) { throw AuthenticatorError.trashEntryUnreadable(id: id, why: waiting.why) }
                throw AuthenticatorError.notFound("The trash entry \(trashID)")
            }
            entry = found
        } catch let error as AuthenticatorError {
            throw error
        } catch {
            throw .storageFailed(operation: "read the trash", cause: error)
        }
        // What comes back must not be listed like another account now.
        if let other = namesListed(asIssuer: entry.account.shownIssuer, accountName: entry.account.shownAccountName, except: entry.account) {
            throw .nameTaken(issuer: other.shownIssuer, accountName: other.shownAccountName)
        }
        if entry.mechanisms.isEmpty {
            guard let current = account(storedAs: entry.account.identifier) else {
                // A removed account that had no mechanisms: the account itself comes back.
                guard entry.reason == "removed" else {
                    throw .notFound("The account \(entry.account.issuer) / \(entry.account.accountName) (restore the account first)")
                }
                try storeAccountIfAbsent(entry.account)
                do { try trash.remove(entry.id) } catch { throw .storageFailed(operation: "forget the restored trash entry", cause: error) }
                return entry
            }
            // An entry without mechanisms keeps an account's names and details as they were (a
            // rename, a note an import replaced): both come back; what is there now goes to the trash.
            _ = try keepInTrash(current, [], reason: "replaced by restore", always: true)
            _ = try updateAccount(entry.account) { stored in
                stored.displayIssuer = entry.account.displayIssuer
                stored.displayAccountName = entry.account.displayAccountName
                stored.details = entry.account.details
            }
        } else {
            try restoreMechanisms(of: entry, replacing: replacing)
        }
        do { try trash.remove(entry.id) } catch { throw .storageFailed(operation: "forget the restored trash entry", cause: error) }
        return entry
    }

    private func restoreMechanisms(of entry: TrashEntry, replacing: Bool) throws(AuthenticatorError) {
        let existing = account(identifier: entry.account.identifier)
        if let clash = existing?.mechanisms.first(where: { now in entry.mechanisms.contains { $0.type == now.type } }), !replacing {
            throw .restoreClash(type: clash.type, issuer: entry.account.shownIssuer, accountName: entry.account.shownAccountName, trashID: entry.id)
        }
        let owner = existing?.account ?? entry.account
        let current = existing?.mechanisms.filter { now in entry.mechanisms.contains { $0.type == now.type } } ?? []
        let kept = try keepInTrash(owner, current, reason: "replaced by restore")
        var replaced: [Mechanism] = []
        for mechanism in entry.mechanisms {
            replaced += try add(account: owner, mechanism: mechanism, replacing: replacing)
        }
        try kept?.finish(with: replaced)
    }

    /// The stored account changed by `change` in one step of the storage client.
    private func updateAccount(_ account: Account, _ change: @escaping (inout Account) throws -> Void) throws(AuthenticatorError) -> Account {
        guard self.account(storedAs: account.identifier) != nil else {
            throw .notFound("The account \(account.issuer) / \(account.accountName)")
        }
        return try updatingAccount(account.identifier, change)
    }

    /// The trash entries `query` names, newest first: the one whose id it is (any case), else
    /// those whose account it names as ``AccountSearch`` names accounts (`restore bank`).
    ///
    /// - Throws: ``AuthenticatorError/noTrash``, or what reading the trash threw.
    public func trashEntries(matching query: String) throws -> [TrashEntry] {
        guard let trash else { throw AuthenticatorError.noTrash }
        let entries = try trash.entries().sorted { $0.trashedAt > $1.trashedAt }
        if let byID = entries.first(where: { $0.id == query.lowercased() }) { return [byID] }
        let accounts = AccountSearch.matches(query, in: entries.map(\.account))
        let identifiers = Set(accounts.map(\.identifier))
        return entries.filter { identifiers.contains($0.account.identifier) }
    }
}
