import Foundation

/// StorageClient protocol represents predefined interfaces and protocols for FRAuthenticator's storage method.
///
/// This is the spec's protocol, verbatim, so a custom client written against the spec compiles
/// unchanged. A client stores and returns only its own objects: associations (an account's
/// mechanisms, a mechanism's notifications) are assembled by ``AuthenticatorClient``.
///
/// Built in: ``SQLiteStorageClient`` (the `coffer` tool's default), ``KeychainStorageClient``
/// (the spec's default, on the OS keyring) and ``MemoryStorageClient``. Run
/// `StorageClientConformance` from `CofferStorageTesting` against yours.
public protocol StorageClient {
    /// Stores Account object into Storage Client and returns discardable Boolean result of operation.
    /// - Parameter account: Account object to store.
    @discardableResult func setAccount(account: Account) -> Bool

    /// Removes Account object from Storage Client, and returns discardable Boolean result of operation.
    /// - Parameter account: Account object to remove.
    @discardableResult func removeAccount(account: Account) -> Bool

    /// Retrieves Account object with its unique identifier.
    /// - Parameter accountIdentifier: String value of Account's unique identifier.
    func getAccount(accountIdentifier: String) -> Account?

    /// Retrieves all Account objects stored in Storage Client.
    func getAllAccounts() -> [Account]

    /// Stores Mechanism object into Storage Client, and returns discardable Boolean result of operation.
    /// The owning Account is stored too when it is not yet.
    /// - Parameter mechanism: Mechanism object to store.
    @discardableResult func setMechanism(mechanism: Mechanism) -> Bool

    /// Removes Mechanism object from Storage Client, and returns discardable Boolean result of operation.
    /// - Parameter mechanism: Mechanism object to remove.
    @discardableResult func removeMechanism(mechanism: Mechanism) -> Bool

    /// Retrieves all Mechanism objects stored in Storage Client.
    /// - Parameter account: Account object that is associated with Mechanism(s).
    func getMechanismsForAccount(account: Account) -> [Mechanism]

    /// Retrieves Mechanism object with given Mechanism UUID.
    /// - Parameter uuid: UUID of Mechanism.
    func getMechanismForUUID(uuid: String) -> Mechanism?

    /// Stores PushNotification object into Storage Client, and returns discardable Boolean result of operation.
    /// - Parameter notification: PushNotification object to store.
    @discardableResult func setNotification(notification: PushNotification) -> Bool

    /// Removes PushNotification object from Storage Client, and returns discardable Boolean result of operation.
    /// - Parameter notification: PushNotification object to remove.
    @discardableResult func removeNotification(notification: PushNotification) -> Bool

    /// Retrieves all Notification objects from Storage Client with given Mechanism object.
    /// - Parameter mechanism: Mechanism object that is associated with Notification(s).
    func getAllNotificationsForMechanism(mechanism: Mechanism) -> [PushNotification]

    /// Returns whether or not StorageClient has any data stored.
    @discardableResult func isEmpty() -> Bool

    // MARK: Beyond the spec (with default implementations)

    /// The notification with `messageId` for `mechanism`, if stored.
    func getNotification(messageId: String, mechanism: Mechanism) -> PushNotification?

    /// Every stored notification.
    func getAllNotifications() -> [PushNotification]

    /// Stores the push device token, replacing the previous one.
    @discardableResult func setPushDeviceToken(_ token: PushDeviceToken) -> Bool

    /// The stored push device token, if any.
    func getPushDeviceToken() -> PushDeviceToken?

    /// Removes the push device token.
    @discardableResult func removePushDeviceToken() -> Bool

    /// Stores a new mechanism (and its account when missing), never replacing anything: when a
    /// mechanism with its UUID, or a mechanism of its type for its account, is already stored
    /// (readable or not), nothing is written and the error says which.
    ///
    /// The built-in clients check and write in one atomic step, across processes. The default,
    /// for clients written to the spec, checks with ``getMechanismForUUID(uuid:)`` and
    /// ``getMechanismsForAccount(account:)`` and then calls ``setMechanism(mechanism:)``: it is
    /// **not atomic**, and it cannot see records the client fails to read.
    ///
    /// - Throws: ``StorageClientError/uuidTaken(uuid:)``,
    ///   ``StorageClientError/mechanismExists(issuer:accountName:type:)``, or the client's error.
    func insertMechanism(_ mechanism: Mechanism) throws

    /// Claims the next value of a HOTP counter: stores the counter plus one and returns the
    /// mechanism as it was, whose `counter` is the value to compute the code with.
    ///
    /// The built-in clients do this atomically, across processes (a compare-and-swap on the old
    /// value), so no two callers ever get the same counter value and no value is skipped. The
    /// default, for clients written to the spec, reads with ``getMechanismForUUID(uuid:)`` and
    /// writes with ``setMechanism(mechanism:)``: it is **not atomic**, and two processes can
    /// get the same value.
    ///
    /// - Throws: ``StorageClientError/mechanismNotFound(uuid:)``,
    ///   ``StorageClientError/counterExhausted(uuid:)``, or the client's error.
    func advanceCounter(mechanismUUID: String) throws -> Mechanism

    /// Removes the mechanism only if its stored counter is still `mechanism.counter` (no HOTP
    /// code was issued from it since it was read); returns `false`, removing nothing, when it
    /// moved. A mechanism that owns notifications is refused, as by ``removeMechanism(mechanism:)``.
    ///
    /// Migrations use it, so that a code issued from the source while it is being copied is not
    /// issued again from the target. The built-in clients check and remove in one statement; the
    /// default reads, compares, then removes: **not atomic**.
    ///
    /// - Throws: ``StorageClientError/mechanismNotFound(uuid:)``, or the client's error.
    func removeMechanismIfUnchanged(_ mechanism: Mechanism) throws -> Bool

    /// Reads the account with `accountIdentifier`, lets `change` modify it and stores it, as one
    /// step: a lock, unlock or rename made by another process at the same moment is never
    /// undone, and an account removed meanwhile is not brought back. The identity (issuer and
    /// account name) must stay as it is. Returns the account as stored.
    ///
    /// The built-in clients read and write in one transaction or under their cross-process lock.
    /// The default, for clients written to the spec, reads with ``getAccount(accountIdentifier:)``
    /// and writes with ``setAccount(account:)``: **not atomic**.
    ///
    /// - Throws: ``StorageClientError/accountNotFound(identifier:)``,
    ///   ``StorageClientError/identityChanged(identifier:)``, what `change` throws, or the
    ///   client's error; nothing is written then.
    @discardableResult
    func updateAccount(accountIdentifier: String, _ change: (inout Account) throws -> Void) throws -> Account

    /// The names of every account (``AccountNames``), in the order of ``getAllAccounts()``,
    /// without the rest of each record: finding the one account a person names among many
    /// reads only these, then that account.
    ///
    /// The SQLite client reads four columns. The default, for clients written to the spec,
    /// takes them from ``getAllAccounts()``.
    func getAllAccountNames() -> [AccountNames]
}

extension StorageClient {
    /// The names of ``getAllAccounts()``.
    public func getAllAccountNames() -> [AccountNames] {
        getAllAccounts().map { AccountNames($0) }
    }

    /// Looks the notification up among ``getAllNotificationsForMechanism(mechanism:)``.
    public func getNotification(messageId: String, mechanism: Mechanism) -> PushNotification? {
        getAllNotificationsForMechanism(mechanism: mechanism).first { $0.messageId == messageId }
    }

    /// Collects the notifications of every push mechanism of every account.
    public func getAllNotifications() -> [PushNotification] {
        getAllAccounts().flatMap { getMechanismsForAccount(account: $0) }
            .filter { $0.type == .push }
            .flatMap { getAllNotificationsForMechanism(mechanism: $0) }
    }

    /// Not supported by clients written to the spec: returns `false`.
    @discardableResult public func setPushDeviceToken(_ token: PushDeviceToken) -> Bool { false }

    /// Not supported by clients written to the spec: returns `nil`.
    public func getPushDeviceToken() -> PushDeviceToken? { nil }

    /// Not supported by clients written to the spec: returns `false`.
    @discardableResult public func removePushDeviceToken() -> Bool { false }

    /// Checks, then calls ``setMechanism(mechanism:)``: **not atomic** (see the requirement).
    public func insertMechanism(_ mechanism: Mechanism) throws {
        if getMechanismForUUID(uuid: mechanism.mechanismUUID) != nil { throw StorageClientError.uuidTaken(uuid: mechanism.mechanismUUID) }
        let owner = Account(issuer: mechanism.issuer, accountName: mechanism.accountName)
        if getMechanismsForAccount(account: owner).contains(where: { $0.type == mechanism.type }) {
            throw StorageClientError.mechanismExists(issuer: mechanism.issuer, accountName: mechanism.accountName, type: mechanism.type)
        }
        guard setMechanism(mechanism: mechanism) else {
            throw StorageClientError.failed(operation: "store the mechanism", cause: (self as? any StorageClientDiagnostics)?.lastError)
        }
    }

    /// Reads, compares the counter, then removes: **not atomic** (see the requirement).
    public func removeMechanismIfUnchanged(_ mechanism: Mechanism) throws -> Bool {
        guard let current = getMechanismForUUID(uuid: mechanism.mechanismUUID) else {
            throw StorageClientError.mechanismNotFound(uuid: mechanism.mechanismUUID)
        }
        guard current.counter == mechanism.counter else { return false }
        guard removeMechanism(mechanism: mechanism) else {
            throw StorageClientError.failed(operation: "remove the mechanism", cause: (self as? any StorageClientDiagnostics)?.lastError)
        }
        return true
    }

    /// Reads, changes, then writes with ``setAccount(account:)``: **not atomic** (see the
    /// requirement).
    @discardableResult
    public func updateAccount(accountIdentifier: String, _ change: (inout Account) throws -> Void) throws -> Account {
        guard let stored = getAccount(accountIdentifier: accountIdentifier) else {
            throw StorageClientError.accountNotFound(identifier: accountIdentifier)
        }
        let account = try stored.changed(by: change)
        guard setAccount(account: account) else {
            throw StorageClientError.failed(operation: "store the account", cause: (self as? any StorageClientDiagnostics)?.lastError)
        }
        return account
    }

    /// Reads, then writes with ``setMechanism(mechanism:)``: **not atomic** (see the requirement).
    public func advanceCounter(mechanismUUID: String) throws -> Mechanism {
        guard let current = getMechanismForUUID(uuid: mechanismUUID) else { throw StorageClientError.mechanismNotFound(uuid: mechanismUUID) }
        var advanced = current
        advanced.counter = try current.nextCounter()
        guard setMechanism(mechanism: advanced) else {
            throw StorageClientError.failed(operation: "store the advanced HOTP counter", cause: (self as? any StorageClientDiagnostics)?.lastError)
        }
        return current
    }
}

extension Account {
    /// This account as `change` leaves it, which must keep its identity (issuer and account
    /// name): ``StorageClient/updateAccount(accountIdentifier:_:)``'s one rule, for every client.
    ///
    /// - Throws: ``StorageClientError/identityChanged(identifier:)``, or what `change` throws.
    package func changed(by change: (inout Account) throws -> Void) throws -> Account {
        var account = self
        try change(&account)
        guard account.identifier == identifier else { throw StorageClientError.identityChanged(identifier: identifier) }
        return account
    }
}

extension Mechanism {
    /// The counter plus one, or ``StorageClientError/counterExhausted(uuid:)`` when it cannot
    /// grow (checked arithmetic: a counter never wraps to 0).
    package func nextCounter() throws(StorageClientError) -> UInt64 {
        let (next, overflow) = counter.addingReportingOverflow(1)
        guard !overflow else { throw .counterExhausted(uuid: mechanismUUID) }
        return next
    }
}

/// A storage client that keeps the cause of its last failure, since the ``StorageClient``
/// protocol can only answer `false` or `nil`. ``AuthenticatorClient`` reports it in its errors.
public protocol StorageClientDiagnostics {
    /// The cause of the most recent failed call, if any.
    var lastError: (any Error)? { get }

    /// How many stored records could not be read back (wrong or missing key, damage) since the
    /// client was created. Such records are left out of results and left where they are.
    var unreadableRecordCount: Int { get }

    /// The records counted in ``unreadableRecordCount`` (the first 100), each named with why it
    /// cannot be read; never with a secret.
    var unreadableRecords: [String] { get }
}
