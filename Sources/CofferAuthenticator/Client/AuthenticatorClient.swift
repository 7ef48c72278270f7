import CofferStorage
import Foundation
import CofferMFAEngine
import Logging

/// An account with what belongs to it, as ``AuthenticatorClient`` assembles it.
public struct AccountEntry: Sendable, Equatable {
    /// The account.
    public var account: Account
    /// Its mechanisms.
    public var mechanisms: [Mechanism]
    /// The notifications of its push mechanisms.
    public var notifications: [PushNotification]
}

/// Manages accounts through a ``StorageClient``: adds them from URIs, lists them with their
/// mechanisms and notifications, removes them with everything they own, locks and unlocks
/// them, and generates codes.
///
/// The storage client is called under one lock, so a client that is not thread-safe (like the
/// spec's example) is never called concurrently.
public final class AuthenticatorClient: @unchecked Sendable {
    // @unchecked Sendable: `storage` (which need not be thread-safe) and `cache` are read and
    // written only while `lock` is held (see `withStorage` and `accounts()`); the other
    // properties are immutable and Sendable.
    private let lock = NSLock()
    private let storage: any StorageClient
    private var cache: [AccountEntry]?
    private let enableCredentialCache: Bool
    private let clock: @Sendable () -> Date
    private let counterFloor: (@Sendable (Mechanism) throws -> UInt64)?
    private let keepCounter: (@Sendable (Mechanism) throws -> Void)?
    /// Receives a line for every refused or failed operation.
    public let logger: Logger
    /// Where what the client takes away is kept for ``restore(trashID:replacing:)-neji``: a removed
    /// account, a mechanism a new enrolment or import replaced, an account's old names. `nil`
    /// keeps nothing (removals are final).
    public let trash: (any AccountTrash)?

    /// Creates a client over `storage`.
    ///
    /// - Parameters:
    ///   - storage: Where the accounts, mechanisms and notifications are kept.
    ///   - logger: Receives a line for every refused or failed operation (never a secret).
    ///   - enableCredentialCache: Keep the assembled account list in memory between calls (it is
    ///     rebuilt after every change made through this client).
    ///   - clock: The time used for TOTP codes and new records; injectable for tests.
    ///   - counterFloor: The lowest counter a HOTP mechanism may be stored with (the highest
    ///     counter its secret was seen with, in a trash or in a record of counters), applied to
    ///     every mechanism added, imported or restored through this client before it is stored:
    ///     a code the server has seen is never issued again. When it throws (the record of
    ///     counters cannot be read), nothing is stored and the add fails with
    ///     ``AuthenticatorError/storageFailed(operation:cause:)`` carrying that error.
    ///   - keepCounter: Called with each HOTP mechanism exactly as it is about to be taken out
    ///     (``takeOut(_:)``, a replacing add or import), before it is: the place to record its
    ///     counter durably, so that a process killed between the removal and whatever keeps the
    ///     mechanism afterwards (a trash) cannot lose it, and `counterFloor` finds it. When it
    ///     throws, nothing is taken out.
    ///   - trash: Where what the client takes away is kept (``trash``); `nil` keeps nothing.
    public init(
        storage: any StorageClient, enableCredentialCache: Bool = false, logger: Logger = Logger(label: "org.coffer.authenticator"),
        clock: @escaping @Sendable () -> Date = Date.init, counterFloor: (@Sendable (Mechanism) throws -> UInt64)? = nil,
        keepCounter: (@Sendable (Mechanism) throws -> Void)? = nil, trash: (any AccountTrash)? = nil
    ) {
        self.storage = storage
        self.trash = trash
        self.enableCredentialCache = enableCredentialCache
        self.logger = logger
        self.clock = clock
        self.counterFloor = counterFloor
        self.keepCounter = keepCounter
    }

    /// Creates a client over `storage` that never issues a HOTP code twice across a remove and
    /// re-add: every HOTP mechanism it stores starts at its secret's ``HOTPCounterFloor`` (the
    /// store, `ledger`, and `remembered`: what a trash keeps), a secret another account holds is
    /// refused, and each HOTP mechanism's counter is recorded in `ledger` before the client takes
    /// it out.
    ///
    /// - Parameters:
    ///   - storage: Where the accounts, mechanisms and notifications are kept.
    ///   - ledger: The store's record of counters: ``SealedCounterLedgerFile`` beside a
    ///     ``SQLiteStorageClient``; ``KeychainStorageClient`` and PostgreSQL's client are their own.
    ///   - remembered: The mechanisms kept elsewhere whose counters count too; by default, what
    ///     `trash` keeps.
    ///   - trash: Where removed, replaced and renamed accounts are kept for
    ///     ``restore(trashID:replacing:)-neji``: ``SealedTrashDirectory`` beside a ``SQLiteStorageClient``,
    ///     ``MemoryTrash``, or one of your own; `nil` keeps nothing.
    ///   - enableCredentialCache: As ``init(storage:enableCredentialCache:logger:clock:counterFloor:keepCounter:trash:)``.
    ///   - logger: Receives a line for every refused or failed operation (never a secret).
    ///   - clock: The time used for TOTP codes and new records.
    public convenience init(
        storage: any StorageClient, ledger: (any HOTPCounterLedger)?, remembered: (@Sendable () throws -> [Mechanism])? = nil,
        trash: (any AccountTrash)? = nil, enableCredentialCache: Bool = false, logger: Logger = Logger(label: "org.coffer.authenticator"),
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        var kept = remembered
        if kept == nil, let trash { kept = { @Sendable in try trash.entries().flatMap(\.mechanisms) } }
        let floor = HOTPCounterFloor(storage: storage, ledger: ledger, remembered: kept)
        self.init(storage: storage, enableCredentialCache: enableCredentialCache, logger: logger, clock: clock,
                  counterFloor: { try floor.floor(for: $0) }, keepCounter: { try ledger?.rememberBlocking([$0]) }, trash: trash)
    }

    // MARK: - Accounts

    /// Adds the account and mechanism(s) of an `otpauth://`, `pushauth://` or `mfauth://` URI.
    ///
    /// - Throws: ``AuthenticatorError/invalidURI(_:)`` naming the bad parameter,
    ///   ``AuthenticatorError/duplicateMechanism(type:issuer:accountName:)`` when the account
    ///   already has a mechanism of that type, ``AuthenticatorError/nameTaken(issuer:accountName:)``
    ///   when another account is shown under the URI's names (renamed to them),
    ///   ``AuthenticatorError/storageFailed(operation:cause:)``.
    @discardableResult
    public func addAccount(uri: String) throws(AuthenticatorError) -> AccountEntry {
        let parsed: MechanismURI.Parsed
        do {
            parsed = try MechanismURI.parse(uri, now: clock())
        } catch {
            logger.notice("refused a URI", metadata: ["reason": "\(error.errorDescription ?? "")"])
            throw .invalidURI(error)
        }
        return try holdingNames { () throws(AuthenticatorError) in try withStorage { (storage) throws(AuthenticatorError) in
            let existing = storage.getAccount(accountIdentifier: parsed.account.identifier)
            if existing == nil, let other = Self.listedAlike(parsed.account, in: storage.getAllAccountNames()) {
                throw .nameTaken(issuer: other.shownIssuer, accountName: other.shownAccountName)
            }
            try insert(parsed.mechanisms, into: storage, accountIsNew: existing == nil)
            // A stored account keeps what it has (the names it shows, its lock, its details);
            // the URI only fills in a logo or colour it lacks.
            var account = existing ?? parsed.account
            account.imageURL = account.imageURL ?? parsed.account.imageURL
            account.backgroundColor = account.backgroundColor ?? parsed.account.backgroundColor
            try write(storage.setAccount(account: account), "store the account", storage)
            return AccountEntry(account: account, mechanisms: storage.getMechanismsForAccount(account: account), notifications: [])
        } }
    }

    /// The stored account, other than `account` itself, that shows `account`'s names (a renamed
    /// one): a new account must not be listed alike.
    static func listedAlike(_ account: Account, in accounts: [AccountNames]) -> AccountNames? {
        listedAlike(issuer: account.shownIssuer, accountName: account.shownAccountName, except: account.identifier, in: accounts)
    }

    /// The account of `accounts`, other than the one `except` identifies, that is listed as
    /// `issuer: accountName` by the names it shows or the ones its issuer gave, compared as
    /// queries compare them (case, accents and width folded): two such accounts could not be
    /// told apart by a query.
    static func listedAlike(issuer: String, accountName: String, except: String?, in accounts: [AccountNames]) -> AccountNames? {
        allListedAlike(issuer: issuer, accountName: accountName, except: except, in: accounts).first
    }

    /// Every account of `accounts` that ``listedAlike(issuer:accountName:except:in:)`` could
    /// answer, in order, worked out as far as it is read.
    static func allListedAlike(issuer: String, accountName: String, except: String?, in accounts: [AccountNames])
        -> LazyFilterSequence<[AccountNames]> {
        let wanted = AccountSearch.listingKey(issuer: issuer, name: accountName)
        return accounts.lazy.filter { other in
            other.identifier != except
                && (AccountSearch.listingKey(issuer: other.shownIssuer, name: other.shownAccountName) == wanted
                    || AccountSearch.listingKey(issuer: other.issuer, name: other.accountName) == wanted)
        }
    }

    /// Runs `body` holding the store's names lock (``SerializedAdds/serializingNames(_:)``):
    /// the check that no other account is listed alike and the write that names an account are
    /// one step against other processes.
    func holdingNames<R>(_ body: () throws(AuthenticatorError) -> R) throws(AuthenticatorError) -> R {
        guard let serialized = storage as? any SerializedAdds else { return try body() }
        let outcome: Result<R, AuthenticatorError>
        do {
            outcome = try serialized.serializingNames {
                do throws(AuthenticatorError) { return .success(try body()) } catch { return .failure(error) }
            }
        } catch {
            throw .storageFailed(operation: "take the store's names lock", cause: error)
        }
        return try outcome.get()
    }

    /// Adds the account of a URI again, replacing its mechanisms of the same types: a
    /// re-enrolment, when the issuer has given a new QR code. The names shown (``Account/displayIssuer``,
    /// ``Account/displayAccountName``) and the time the account was added are kept. A stored
    /// mechanism that cannot be read is never replaced
    /// (``AuthenticatorError/duplicateMechanism(type:issuer:accountName:)``).
    @discardableResult
    public func addAccount(uri: String, replacing: Bool) throws(AuthenticatorError) -> AccountEntry {
        guard replacing else { return try addAccount(uri: uri) }
        return try replaceAccount(uri: uri).entry
    }

    /// ``addAccount(uri:replacing:)`` with `replacing`, which also returns the mechanisms it
    /// replaced, each as it was when it was taken out (see ``takeOut(_:)``): what an undo keeps.
    /// A HOTP mechanism replaced by one with the same secret passes its counter on, so no code
    /// issued from it is issued again. With a ``trash``, what is replaced is put there first
    /// (under `trashReason`) and rewritten as it was finally taken out; `trashID` names it.
    public func replaceAccount(uri: String, trashReason: String = "replaced")
        throws(AuthenticatorError) -> (entry: AccountEntry, replaced: [Mechanism], trashID: String?) {
        let parsed: MechanismURI.Parsed
        do {
            parsed = try MechanismURI.parse(uri, now: clock())
        } catch {
            throw .invalidURI(error)
        }
        return try holdingNames { () throws(AuthenticatorError) in try withStorage { (storage) throws(AuthenticatorError) in
            let existing = storage.getAccount(accountIdentifier: parsed.account.identifier)
            if existing == nil, let other = Self.listedAlike(parsed.account, in: storage.getAllAccountNames()) {
                throw .nameTaken(issuer: other.shownIssuer, accountName: other.shownAccountName)
            }
            let current = existing.map { storage.getMechanismsForAccount(account: $0) } ?? []
            let replacing = current.filter { old in parsed.mechanisms.contains { $0.type == old.type } }
            // What would refuse the new mechanisms refuses them before the old ones go.
            try checkBeforeReplacing(parsed.mechanisms, replacing: replacing, in: storage)
            let kept = try keepInTrash(existing, replacing, reason: trashReason)
            var replaced: [Mechanism] = []
            for old in replacing {
                if let taken = try takeOut(old, from: storage) { replaced.append(taken) }
            }
            try kept?.finish(with: replaced)
            let mechanisms = parsed.mechanisms.map { Self.carryingCounter(of: replaced, to: $0) }
            try insert(mechanisms, into: storage, accountIsNew: existing == nil)
            // The stored account keeps what it has (shown names, time added, lock, details).
            var account = existing ?? parsed.account
            account.imageURL = account.imageURL ?? parsed.account.imageURL
            account.backgroundColor = account.backgroundColor ?? parsed.account.backgroundColor
            try write(storage.setAccount(account: account), "store the account", storage)
            return (AccountEntry(account: account, mechanisms: storage.getMechanismsForAccount(account: account), notifications: []), replaced,
                    kept?.id)
        } }
    }

    /// Takes `mechanism` out of the store, with its notifications, as it is at that moment, and
    /// returns it so (`nil` when it is no longer stored). A HOTP code issued from it meanwhile
    /// moves its counter: the removal sees that (``StorageClient/removeMechanismIfUnchanged(_:)``),
    /// and the mechanism is read again and taken out then. The counter returned is the next one
    /// not issued: what a trash, or a replacement with the same secret, must carry on from.
    public func takeOut(_ mechanism: Mechanism) throws(AuthenticatorError) -> Mechanism? {
        try withStorage { (storage) throws(AuthenticatorError) in try takeOut(mechanism, from: storage) }
    }

    private func takeOut(_ mechanism: Mechanism, from storage: any StorageClient) throws(AuthenticatorError) -> Mechanism? {
        var current = mechanism
        for _ in 0..<1000 {
            if current.type == .hotp, let keepCounter {
                do {
                    try keepCounter(current)
                } catch {
                    throw .storageFailed(operation: "record the HOTP counter before taking the mechanism out", cause: error)
                }
            }
            for notification in storage.getAllNotificationsForMechanism(mechanism: current) {
                try write(storage.removeNotification(notification: notification), "remove a notification", storage)
            }
            do {
                if try storage.removeMechanismIfUnchanged(current) { return current }
            } catch {
                if case .mechanismNotFound? = error as? StorageClientError { return nil }
                throw .storageFailed(operation: "take out the \(current.type.rawValue) mechanism", cause: error)
            }
            guard let again = storage.getMechanismForUUID(uuid: current.mechanismUUID) else { return nil }
            current = again
        }
        throw .storageFailed(operation: "take out the \(current.type.rawValue) mechanism while its HOTP counter kept moving", cause: nil)
    }

    /// `mechanism`, with the counter of the HOTP mechanism of the same secret (in any spelling:
    /// `OathKeyIdentity`) among `replaced` when that is higher: a counter never goes back.
    static func carryingCounter(of replaced: [Mechanism], to mechanism: Mechanism) -> Mechanism {
        guard mechanism.type == .hotp, let identity = mechanism.keyIdentity,
              let floor = replaced.filter({ $0.type == .hotp && $0.keyIdentity == identity }).map(\.counter).max(),
              floor > mechanism.counter else { return mechanism }
        var carried = mechanism
        carried.counter = floor
        return carried
    }

    /// Inserts `mechanisms` with ``StorageClient/insertMechanism(_:)``, which never replaces a
    /// stored one (readable or not) and is atomic across processes in the built-in clients:
    /// of two processes adding the same account at once, exactly one succeeds. If one of them
    /// cannot be inserted, those this call inserted are removed again, by their ids.
    private func insert(_ mechanisms: [Mechanism], into storage: any StorageClient, accountIsNew: Bool) throws(AuthenticatorError) {
        // The check and the insert as one step against other processes, when the store can hold
        // their adds back (SQLite): two adds of one HOTP secret under two names never both win.
        guard let serialized = storage as? any SerializedAdds, mechanisms.contains(where: { $0.type == .hotp }) else {
            return try insertChecked(mechanisms, into: storage, accountIsNew: accountIsNew)
        }
        let outcome: Result<Void, AuthenticatorError>
        do {
            outcome = try serialized.serializingAdds {
                do throws(AuthenticatorError) { try insertChecked(mechanisms, into: storage, accountIsNew: accountIsNew); return .success(()) }
                catch { return .failure(error) }
            }
        } catch {
            throw .storageFailed(operation: "take the store's add lock", cause: error)
        }
        try outcome.get()
    }

    private func insertChecked(_ mechanisms: [Mechanism], into storage: any StorageClient, accountIsNew: Bool) throws(AuthenticatorError) {
        // Every floor first: one that cannot be known stops the add before anything is stored.
        var floored: [Mechanism] = []
        for var mechanism in mechanisms {
            if mechanism.type == .hotp, let counterFloor {
                do {
                    mechanism.counter = max(mechanism.counter, try counterFloor(mechanism))
                } catch {
                    throw .storageFailed(operation: "find the highest counter this HOTP secret was used with", cause: error)
                }
            }
            floored.append(mechanism)
        }
        var inserted: [Mechanism] = []
        for mechanism in floored {
            do {
                try storage.insertMechanism(mechanism)
                inserted.append(mechanism)
            } catch {
                for done in inserted.reversed() { storage.removeMechanism(mechanism: done) }
                if accountIsNew, !inserted.isEmpty {
                    storage.removeAccount(account: Account(issuer: mechanism.issuer, accountName: mechanism.accountName))
                }
                if case let StorageClientError.mechanismExists(issuer, accountName, type) = error {
                    throw .duplicateMechanism(type: type, issuer: issuer, accountName: accountName)
                }
                throw .storageFailed(operation: "store the \(mechanism.type.rawValue) mechanism", cause: error)
            }
        }
    }

    /// Throws what ``insert(_:into:accountIsNew:)`` would refuse `mechanisms` for — a HOTP floor
    /// that cannot be known or a secret another account holds, a mechanism id another object
    /// holds — before `replacing` is taken out, so a refused replacement loses nothing.
    private func checkBeforeReplacing(_ mechanisms: [Mechanism], replacing: [Mechanism], in storage: any StorageClient) throws(AuthenticatorError) {
        for mechanism in mechanisms {
            if mechanism.type == .hotp, let counterFloor {
                do { _ = try counterFloor(mechanism) } catch {
                    throw .storageFailed(operation: "find the highest counter this HOTP secret was used with", cause: error)
                }
            }
            if storage.getMechanismForUUID(uuid: mechanism.mechanismUUID) != nil,
               !replacing.contains(where: { $0.mechanismUUID == mechanism.mechanismUUID }) {
                throw .storageFailed(operation: "store the \(mechanism.type.rawValue) mechanism", cause: StorageClientError.uuidTaken(uuid: mechanism.mechanismUUID))
            }
        }
    }

    /// Adds `mechanism` (and its `account` when new). With `replacing`, a readable mechanism of
    /// the same type on that account is replaced; without, it is refused with
    /// ``AuthenticatorError/duplicateMechanism(type:issuer:accountName:)``. An unreadable one is
    /// never replaced. A mechanism UUID that another object holds is refused with
    /// ``AuthenticatorError/storageFailed(operation:cause:)`` whose cause is
    /// ``StorageClientError/uuidTaken(uuid:)``. Returns what it replaced, as ``takeOut(_:)``
    /// took it out; a HOTP mechanism of the same secret passes its counter on.
    @discardableResult
    public func add(account: Account, mechanism: Mechanism, replacing: Bool = false) throws(AuthenticatorError) -> [Mechanism] {
        try withStorage { (storage) throws(AuthenticatorError) in
            let existing = storage.getAccount(accountIdentifier: account.identifier)
            let current = existing.map { storage.getMechanismsForAccount(account: $0) } ?? []
            var replaced: [Mechanism] = []
            let clash = replacing ? current.first(where: { $0.type == mechanism.type }) : nil
            if let clash {
                // What would refuse the new mechanism refuses it before the old one goes.
                try checkBeforeReplacing([mechanism], replacing: [clash], in: storage)
                if let taken = try takeOut(clash, from: storage) { replaced.append(taken) }
            }
            try insert([Self.carryingCounter(of: replaced, to: mechanism)], into: storage, accountIsNew: existing == nil)
            if existing == nil { try write(storage.setAccount(account: account), "store the account", storage) }
            return replaced
        }
    }

    /// Every account with its mechanisms and notifications, oldest first.
    public func accounts() -> [AccountEntry] {
        lock.withLock {
            if enableCredentialCache, let cached = cache { return cached }
            let entries = assemble(storage.getAllAccounts())
            if enableCredentialCache { cache = entries }
            return entries
        }
    }

    /// The accounts `include` accepts, with their mechanisms and notifications. Only those
    /// accounts' secrets are read, which keeps lookups in large stores fast.
    public func accounts(where include: (Account) -> Bool) -> [AccountEntry] {
        lock.withLock {
            if enableCredentialCache, let cached = cache { return cached.filter { include($0.account) } }
            return assemble(storage.getAllAccounts().filter(include))
        }
    }

    /// `accounts` (as the storage client returned them) with their mechanisms and
    /// notifications: for a caller that has already chosen which accounts it needs, so nothing
    /// is listed twice.
    public func entries(for accounts: [Account]) -> [AccountEntry] {
        lock.withLock { assemble(accounts) }
    }

    /// Adds mechanisms and notifications to `accounts`. Call with the lock held.
    private func assemble(_ accounts: [Account]) -> [AccountEntry] {
        accounts.map { account in
            let mechanisms = storage.getMechanismsForAccount(account: account)
            return AccountEntry(
                account: account, mechanisms: mechanisms,
                notifications: mechanisms.filter { $0.type == .push }.flatMap { storage.getAllNotificationsForMechanism(mechanism: $0) })
        }
    }

    /// The account with `identifier` (see ``Account/identifier``), with what belongs to it.
    public func account(identifier: String) -> AccountEntry? {
        lock.withLock { storage.getAccount(accountIdentifier: identifier).map { assemble([$0])[0] } }
    }

    /// The stored account with `identifier` (one lookup), without what belongs to it.
    func account(storedAs identifier: String) -> Account? {
        lock.withLock { storage.getAccount(accountIdentifier: identifier) }
    }

    /// Every stored account, without what belongs to them.
    func allAccounts() -> [Account] {
        lock.withLock { storage.getAllAccounts() }
    }

    /// Every stored account's names (``StorageClient/getAllAccountNames()``).
    func allAccountNames() -> [AccountNames] {
        lock.withLock { storage.getAllAccountNames() }
    }

    /// Removes `account` with all its mechanisms and their notifications from storage (not just
    /// from what this client has seen). Each mechanism is taken out as ``takeOut(_:)`` does: a
    /// HOTP mechanism's counter is kept (`keepCounter`, the ledger) before it goes.
    ///
    /// With a ``trash``, the account and its mechanisms go there first (a removal that fails
    /// after that leaves a copy, never a loss), and the entry is rewritten with the mechanisms as
    /// they were finally taken out (a HOTP code issued meanwhile is seen). Returns the entry's id
    /// for ``restore(trashID:replacing:)-neji``; `nil` without a trash.
    @discardableResult
    public func removeAccount(_ account: Account) throws(AuthenticatorError) -> String? {
        try withStorage { (storage) throws(AuthenticatorError) in
            guard let stored = storage.getAccount(accountIdentifier: account.identifier) else {
                throw .notFound("The account \(account.issuer) / \(account.accountName)")
            }
            let mechanisms = storage.getMechanismsForAccount(account: stored)
            let kept = try keepInTrash(stored, mechanisms, reason: "removed", always: true)
            var taken: [Mechanism] = []
            for mechanism in mechanisms {
                if let out = try takeOut(mechanism, from: storage) { taken.append(out) }
            }
            try kept?.finish(with: taken, keepingEmpty: true)
            try write(storage.removeAccount(account: stored), "remove the account", storage)
            return kept?.id
        }
    }

    /// Locks `account` under `policy`: it generates no codes until ``unlock(_:)``.
    public func lock(_ account: Account, policy: String) throws(AuthenticatorError) {
        try setLocked(account, policy: policy)
    }

    /// Unlocks `account`.
    public func unlock(_ account: Account) throws(AuthenticatorError) {
        try setLocked(account, policy: nil)
    }

    // MARK: - Codes

    /// The current code of an OATH mechanism.
    ///
    /// For HOTP the counter is advanced and stored *before* the code is returned, in one atomic
    /// step of the storage client (``StorageClient/advanceCounter(mechanismUUID:)``): processes
    /// sharing a store never issue the same code. If storing fails, no code is returned.
    public func code(for mechanism: Mechanism) throws(AuthenticatorError) -> OathCode {
        let now = clock()
        return try withStorage { (storage) throws(AuthenticatorError) in
            guard let current = storage.getMechanismForUUID(uuid: mechanism.mechanismUUID) else {
                throw .notFound("The mechanism \(mechanism.mechanismUUID)")
            }
            if let owner = storage.getAccount(accountIdentifier: current.accountIdentifier), owner.isLocked {
                throw .accountLocked(issuer: owner.issuer, accountName: owner.accountName, policy: owner.lockingPolicy)
            }
            let secret: Data
            do { secret = try Base32.decode(current.secret) } catch { throw .invalidSecret((error as? LocalizedError)?.errorDescription ?? "not base32") }
            do {
                switch current.type {
                case .totp:
                    return try OathGenerator.totp(secret: secret, at: now, period: current.period, digits: current.digits,
                                                  algorithm: current.algorithm)
                case .hotp:
                    // The counter moves first, atomically (see StorageClient.advanceCounter), and
                    // the code is computed with the value this call claimed.
                    let claimed: Mechanism
                    do {
                        claimed = try storage.advanceCounter(mechanismUUID: current.mechanismUUID)
                    } catch {
                        throw AuthenticatorError.storageFailed(operation: "advance the HOTP counter", cause: error)
                    }
                    let code = try OathGenerator.hotp(secret: try Base32.decode(claimed.secret), counter: claimed.counter,
                                                      digits: claimed.digits, algorithm: claimed.algorithm)
                    return OathCode(code: code, validFrom: now, validUntil: nil, counter: claimed.counter)
                case .steam:
                    return try OathGenerator.steam(secret: secret, at: now)
                case .push:
                    throw AuthenticatorError.notAnOathMechanism
                }
            } catch let error as AuthenticatorError {
                throw error
            } catch {
                throw .invalidSecret((error as? LocalizedError)?.errorDescription ?? "\(type(of: error))")
            }
        }
    }

    // MARK: - Private

    private func setLocked(_ account: Account, policy: String?) throws(AuthenticatorError) {
        try withStorage { (storage) throws(AuthenticatorError) in
            // One step of the storage client, so a rename or removal meanwhile is kept.
            do {
                try storage.updateAccount(accountIdentifier: account.identifier) { stored in
                    stored.isLocked = policy != nil
                    stored.lockingPolicy = policy
                }
            } catch StorageClientError.accountNotFound {
                throw .notFound("The account \(account.issuer) / \(account.accountName)")
            } catch {
                throw .storageFailed(operation: policy == nil ? "unlock the account" : "lock the account", cause: error)
            }
        }
    }

    /// Runs `body` with the storage under the lock and forgets the cached account list.
    /// Stores `account` unless an account with its identifier is stored (then nothing changes).
    func storeAccountIfAbsent(_ account: Account) throws(AuthenticatorError) {
        try withStorage { (storage) throws(AuthenticatorError) in
            guard storage.getAccount(accountIdentifier: account.identifier) == nil else { return }
            try write(storage.setAccount(account: account), "store the account", storage)
        }
    }

    /// The stored account `identifier` changed by `change` in one step of the storage client.
    func updatingAccount(_ identifier: String, _ change: @escaping (inout Account) throws -> Void) throws(AuthenticatorError) -> Account {
        try withStorage { (storage) throws(AuthenticatorError) in
            do { return try storage.updateAccount(accountIdentifier: identifier, change) } catch {
                throw .storageFailed(operation: "update the account", cause: error)
            }
        }
    }

    private func withStorage<R>(_ body: (any StorageClient) throws(AuthenticatorError) -> R) throws(AuthenticatorError) -> R {
        lock.lock()
        defer { lock.unlock() }
        cache = nil
        do {
            return try body(storage)
        } catch {
            logger.notice("authenticator operation refused", metadata: ["reason": "\(error.errorDescription ?? "")"])
            throw error
        }
    }

    private func write(_ succeeded: Bool, _ operation: String, _ storage: any StorageClient) throws(AuthenticatorError) {
        guard succeeded else {
            throw .storageFailed(operation: operation, cause: (storage as? any StorageClientDiagnostics)?.lastError)
        }
    }
}
