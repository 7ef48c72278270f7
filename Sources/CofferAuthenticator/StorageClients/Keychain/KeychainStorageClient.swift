import CofferMFAEngine
import Foundation
import Logging
import CofferStorage

/// The spec's default ``StorageClient``, on the OS keyring (the freedesktop Secret Service).
///
/// Every object is one keyring item, found by plain attributes and holding the object's JSON
/// sealed by the encryptor (`SecuredKeyEncryptor` by default) and bound to the object's
/// identity, so an item copied onto another object's attributes does not open:
///
/// | object | `service` attribute | other attributes |
/// | --- | --- | --- |
/// | account | `<prefix>.account` | `issuer`, `accountName` |
/// | mechanism | `<prefix>.mechanism` | `uuid`, `issuer`, `accountName`, `type` |
/// | notification | `<prefix>.notification` | `mechanismUUID`, `messageId` |
/// | push device token | `<prefix>.deviceToken` | — |
///
/// The prefix defaults to `org.coffer.authenticator`. Failures return `false`/`nil`/`[]`, are
/// logged without secrets and kept in ``lastError``; unreadable items are counted in
/// ``unreadableRecordCount`` and left in the keyring.
///
/// Every write holds one cross-process lock, `KeyringLock` named after the prefix (in your home
/// directory as the password database names it, one per keyring, whatever the environment), and so does
/// every read-compare-write (a HOTP counter, a removal if unchanged, an account update): every
/// process and shell of the user that shares the keyring takes the same lock, so none of them
/// can write between another's read and write. A removed item is never written back.
public final class KeychainStorageClient: StorageClient, StorageClientDiagnostics, Sendable {
    /// The prefix of the `service` attribute of every item.
    public let servicePrefix: String
    let secretService: SecretService
    private let sealer: FieldSealer
    let diagnostics: ClientDiagnostics
    /// Whether listings take item attributes from the item index (``KeyringItemIndex``).
    let readsItemIndex: Bool

    /// Creates a client whose items are sealed by `encryptor`.
    public convenience init(
        encryptor: any Encryptor, servicePrefix: String = "org.coffer.authenticator", timeout: Duration = SecretService.defaultTimeout,
        logger: Logger = Logger(label: "org.coffer.authenticator.keychain")
    ) {
        self.init(servicePrefix: servicePrefix, secretService: SecretService(timeout: timeout), sealer: FieldSealer(encryptor: encryptor),
                  diagnostics: ClientDiagnostics(logger: logger, store: "keyring (\(servicePrefix).*)"), readsItemIndex: true)
    }

    private init(servicePrefix: String, secretService: SecretService, sealer: FieldSealer, diagnostics: ClientDiagnostics, readsItemIndex: Bool) {
        self.servicePrefix = servicePrefix
        self.secretService = secretService
        self.sealer = sealer
        self.diagnostics = diagnostics
        self.readsItemIndex = readsItemIndex
    }

    /// The same client, whose listings read every item's attributes from the keyring instead of
    /// the item index (and correct the index by what they read): slower, and what `coffer doctor`
    /// checks with, since the index cannot see an item's attributes changed in place by another
    /// program while the keyring daemon runs. It shares this client's ``lastError`` and counts.
    public func withoutItemIndex() -> KeychainStorageClient {
        KeychainStorageClient(servicePrefix: servicePrefix, secretService: secretService, sealer: sealer, diagnostics: diagnostics,
                              readsItemIndex: false)
    }

    /// Creates a client sealed by a `SecuredKeyEncryptor`, as the spec's default keychain
    /// storage is. When the keyring cannot be used, the client is still created, but every operation
    /// fails (returning `false`/`nil`/`[]`, with the reason in ``lastError`` and the log): it never
    /// falls back to storing secrets unsealed. Use ``make(servicePrefix:logger:)`` to be told at once.
    public convenience init(servicePrefix: String = "org.coffer.authenticator", logger: Logger = Logger(label: "org.coffer.authenticator.keychain")) {
        let encryptor: any Encryptor
        do {
            encryptor = try SecuredKeyEncryptor.make(keyAlias: servicePrefix + ".key")
        } catch {
            logger.error("the OS keyring cannot be used; every operation of this storage client will fail",
                         metadata: ["reason": "\(error)"])
            encryptor = UnusableEncryptor(reason: error)
        }
        self.init(encryptor: encryptor, servicePrefix: servicePrefix, logger: logger)
    }

    /// Creates a client sealed by a `SecuredKeyEncryptor`, or throws why the keyring cannot be
    /// used.
    public static func make(servicePrefix: String = "org.coffer.authenticator", logger: Logger = Logger(label: "org.coffer.authenticator.keychain")) throws(KeychainError) -> KeychainStorageClient {
        KeychainStorageClient(encryptor: try SecuredKeyEncryptor.make(keyAlias: servicePrefix + ".key"), servicePrefix: servicePrefix, logger: logger)
    }

    /// The cause of the most recent failed call, if any.
    public var lastError: (any Error)? { diagnostics.lastError }

    /// How many items could not be read back since this client was created.
    public var unreadableRecordCount: Int { diagnostics.unreadableRecordCount }

    /// The records counted in ``unreadableRecordCount`` (the first 100), each with why.
    public var unreadableRecords: [String] { diagnostics.unreadableRecords }

    // MARK: - Accounts

    @discardableResult public func setAccount(account: Account) -> Bool {
        diagnostics.attempt("setAccount") {
            try exclusively { try storeAccountItem(account) }
            return true
        } ?? false
    }

    /// Removes the account when it owns no mechanism any more; one that still does (perhaps an
    /// unreadable one) is left, with ``StorageClientError/stillOwnsRecords(what:count:)`` in
    /// ``lastError``: remove its mechanisms first, as `AuthenticatorClient` does.
    @discardableResult public func removeAccount(account: Account) -> Bool {
        diagnostics.attempt("removeAccount") {
            try exclusively {
                let owned = try search(["service": service("mechanism"), "issuer": account.issuer, "accountName": account.accountName],
                                       loadSecrets: false).count
                guard owned == 0 else {
                    throw StorageClientError.stillOwnsRecords(what: "The account \(account.issuer): \(account.accountName)", count: owned)
                }
                return try removeItems(attributes(account)) > 0
            }
        } ?? false
    }

    /// Reads the account, applies `change` and stores it, holding the lock throughout, so a
    /// concurrent lock, rename or removal is never undone. The account's identity (issuer and
    /// account name) cannot change.
    @discardableResult
    public func updateAccount(accountIdentifier: String, _ change: (inout Account) throws -> Void) throws -> Account {
        try diagnostics.attemptThrowing("updateAccount") {
            try exclusively {
                let parts = IdentifierCoding.split(accountIdentifier)
                let attributes = ["service": service("account"), "issuer": parts.first ?? "", "accountName": parts.count == 2 ? parts[1] : ""]
                let items = parts.count == 2 ? try search(attributes, loadSecrets: true) : []
                guard !items.isEmpty else { throw StorageClientError.accountNotFound(identifier: accountIdentifier) }
                guard items.count == 1 else { throw KeychainError.ambiguous(attributes: attributes, count: items.count) }
                let account = try open(Account.self, items[0]) { "account/\($0.identifier)" }.changed(by: change)
                try storeAccountItem(account)
                return account
            }
        }
    }

    public func getAccount(accountIdentifier: String) -> Account? {
        let parts = IdentifierCoding.split(accountIdentifier)
        guard parts.count == 2 else { return nil }
        return single(Account.self, ["service": service("account"), "issuer": parts[0], "accountName": parts[1]], operation: "getAccount") {
            "account/\($0.identifier)"
        }
    }

    /// Every account. Mechanism items whose account item is gone (removed behind the client's
    /// back) are counted in ``unreadableRecordCount`` here, so a listing never silently leaves
    /// them out; ``restoreMissingAccounts()`` makes them reachable again.
    ///
    /// Reads the account items' secrets and the mechanism items' paths, taking the items'
    /// attributes from the keyring's item index where it knows them (see ``withoutItemIndex()``).
    public func getAllAccounts() -> [Account] {
        guard let found = diagnostics.attempt("getAllAccounts", {
            try listing([ListingSearch(attributes: ["service": service("account")], loadSecrets: true),
                         ListingSearch(attributes: ["service": service("mechanism")], loadSecrets: false)])
        }) else { return [] }
        let accounts = listedRecords(Account.self, found[0], operation: "getAllAccounts") { "account/\($0.identifier)" }
            .sorted(by: AccountKey.order)
        // The owners from the items just read, readable or not: no second search of the accounts.
        let owners = Set(found[0].map(AccountKey.init(owning:)))
        let orphans = found[1].filter { !owners.contains(AccountKey(owning: $0)) }
        for orphan in relabelled(orphans) where !owners.contains(AccountKey(owning: orphan)) {
            _ = diagnostics.readable("getAllAccounts", "mechanism \(orphan.attributes["uuid"] ?? "?")") { () throws -> Void in
                throw StorageError.corrupted(location: orphan.label, reason: "no account owns it (its account item was removed); "
                    + "`coffer doctor --repair` adds the account back, so it can be seen and removed")
            }
        }
        return accounts
    }

    /// Every account's names, from the account items alone (the shown names are sealed with
    /// the account, so each is opened); without ``getAllAccounts()``'s check for mechanisms no
    /// account owns.
    public func getAllAccountNames() -> [AccountNames] {
        guard let found = diagnostics.attempt("getAllAccountNames", {
            try listing([ListingSearch(attributes: ["service": service("account")], loadSecrets: true)])
        }) else { return [] }
        return listedRecords(Account.self, found[0], operation: "getAllAccountNames") { "account/\($0.identifier)" }
            .sorted(by: AccountKey.order).map { AccountNames($0) }
    }

    /// Adds back the account item of every mechanism item that has lost it (a removal that
    /// raced a write, an item deleted with another tool), with no display details, and returns
    /// the accounts added. Only for a mechanism that opens: one that does not (damaged, sealed
    /// with another key, or not Coffer's) gets no account made up from its attributes, and stays
    /// reported. Nothing is removed: the mechanisms become visible again and can be kept or
    /// removed as usual.
    public func restoreMissingAccounts() throws -> [Account] {
        try diagnostics.attemptThrowing("restoreMissingAccounts") {
            try exclusively {
                var restored: [Account] = []
                for orphan in try orphanedMechanismItems(loadingSecrets: true) {
                    guard let mechanism = diagnostics.readable("restoreMissingAccounts", orphan.label, {
                        try open(Mechanism.self, orphan) { "mechanism/\($0.mechanismUUID)" }
                    }) else { continue }
                    let account = Account(issuer: mechanism.issuer, accountName: mechanism.accountName, timeAdded: mechanism.timeAdded)
                    guard !restored.contains(where: { $0.identifier == account.identifier }) else { continue }
                    try storeAccountItem(account)
                    restored.append(account)
                }
                return restored
            }
        }
    }

    /// The mechanism items for which no account item (readable or not) is stored, each item's
    /// attributes read from the keyring (not the index: this is the repair).
    private func orphanedMechanismItems(loadingSecrets: Bool) throws -> [SecretService.Item] {
        let owners = Set(try search(["service": service("account")], loadSecrets: false).map(AccountKey.init(owning:)))
        return try search(["service": service("mechanism")], loadSecrets: loadingSecrets).filter { item in
            !owners.contains(AccountKey(owning: item))
        }
    }

    // MARK: - Mechanisms

    /// Stores or updates `mechanism`; returns `false` (writing nothing, with
    /// ``StorageClientError`` in ``lastError``) when that would replace another object. The
    /// check and the write hold this client's cross-process lock.
    @discardableResult public func setMechanism(mechanism: Mechanism) -> Bool {
        diagnostics.attempt("setMechanism") {
            try exclusively {
                try checkNoClash(mechanism, insertOnly: false)
                try storeMechanism(mechanism)
            }
            return true
        } ?? false
    }

    public func insertMechanism(_ mechanism: Mechanism) throws {
        try diagnostics.attemptThrowing("insertMechanism") {
            try exclusively {
                try checkNoClash(mechanism, insertOnly: true)
                try storeMechanism(mechanism)
            }
        }
    }

    /// Claims the next HOTP counter value: read, check and write under this client's
    /// cross-process lock (`KeyringLock`), so processes sharing the keyring never get the same
    /// value.
    public func advanceCounter(mechanismUUID uuid: String) throws -> Mechanism {
        try diagnostics.attemptThrowing("advanceCounter") {
            try exclusively {
                let current = try lockedMechanism(uuid)
                var advanced = current
                advanced.counter = try current.nextCounter()
                try storeMechanismItem(advanced)
                return current
            }
        }
    }

    /// Removes the mechanism only if its counter is still `mechanism.counter`: read, compare and
    /// delete under the same lock as ``advanceCounter(mechanismUUID:)``, so no code can be issued
    /// from it between the comparison and the removal.
    public func removeMechanismIfUnchanged(_ mechanism: Mechanism) throws -> Bool {
        try diagnostics.attemptThrowing("removeMechanismIfUnchanged") {
            try exclusively {
                let current = try lockedMechanism(mechanism.mechanismUUID)
                guard current.counter == mechanism.counter else { return false }
                return try removeMechanismLocked(current.mechanismUUID)
            }
        }
    }

    /// The one mechanism item with `uuid`, opened (with the lock held).
    private func lockedMechanism(_ uuid: String) throws -> Mechanism {
        let attributes = ["service": service("mechanism"), "uuid": uuid]
        let items = try search(attributes, loadSecrets: true)
        guard !items.isEmpty else { throw StorageClientError.mechanismNotFound(uuid: uuid) }
        guard items.count == 1 else { throw KeychainError.ambiguous(attributes: attributes, count: items.count) }
        return try open(Mechanism.self, items[0]) { "mechanism/\($0.mechanismUUID)" }
    }

    /// Removes the mechanism's item unless it still owns notifications (with the lock held);
    /// whether there was one.
    private func removeMechanismLocked(_ uuid: String) throws -> Bool {
        let owned = try search(["service": service("notification"), "mechanismUUID": uuid], loadSecrets: false).count
        guard owned == 0 else { throw StorageClientError.stillOwnsRecords(what: "The mechanism \(uuid)", count: owned) }
        return try removeItems(["service": service("mechanism"), "uuid": uuid]) > 0
    }

    /// Throws when storing `mechanism` would replace another object (or, with `insertOnly`, any).
    private func checkNoClash(_ mechanism: Mechanism, insertOnly: Bool) throws {
        let sameUUID = try search(["service": service("mechanism"), "uuid": mechanism.mechanismUUID], loadSecrets: false)
        let mine = attributes(mechanism)
        if sameUUID.contains(where: { item in mine.contains { item.attributes[$0.key] != $0.value } }) {
            throw StorageClientError.uuidTaken(uuid: mechanism.mechanismUUID)
        }
        let sameType = try search(["service": service("mechanism"), "issuer": mechanism.issuer, "accountName": mechanism.accountName,
                                   "type": mechanism.type.rawValue], loadSecrets: false)
        if (insertOnly && !sameUUID.isEmpty) || sameType.contains(where: { $0.attributes["uuid"] != mechanism.mechanismUUID }) {
            throw StorageClientError.mechanismExists(issuer: mechanism.issuer, accountName: mechanism.accountName, type: mechanism.type)
        }
    }

    /// Stores the mechanism's item, and its account's when there is none.
    private func storeMechanism(_ mechanism: Mechanism) throws {
        let owner = ["service": service("account"), "issuer": mechanism.issuer, "accountName": mechanism.accountName]
        if try search(owner, loadSecrets: false).isEmpty {
            try storeAccountItem(Account(issuer: mechanism.issuer, accountName: mechanism.accountName, timeAdded: mechanism.timeAdded))
        }
        try storeMechanismItem(mechanism)
    }

    /// Stores the account's item (the lock held), labelled as a keyring manager shows it.
    private func storeAccountItem(_ account: Account) throws {
        try storeItem(account, identity: "account/\(account.identifier)", attributes: attributes(account),
                      label: "\(account.issuer) / \(account.accountName)")
    }

    /// Stores the mechanism's item (the lock held).
    private func storeMechanismItem(_ mechanism: Mechanism) throws {
        try storeItem(mechanism, identity: "mechanism/\(mechanism.mechanismUUID)", attributes: attributes(mechanism),
                      label: "\(mechanism.issuer) / \(mechanism.accountName) (\(mechanism.type.rawValue))")
    }

    /// Runs `body` holding the add lock (``KeyringLock`` named after the prefix and `.adds`).
    func exclusivelyAdding<R>(_ body: () throws -> R) throws -> R {
        let (name, timeout) = (servicePrefix + ".adds", secretService.timeout)
        return try SyncBridge.run { try await KeyringLock.named(name, timeout: timeout) }.withExclusiveLock(body)
    }

    /// Runs `body` holding the names lock (``KeyringLock`` named after the prefix and `.names`).
    func exclusivelyNaming<R>(_ body: () throws -> R) throws -> R {
        let (name, timeout) = (servicePrefix + ".names", secretService.timeout)
        return try SyncBridge.run { try await KeyringLock.named(name, timeout: timeout) }.withExclusiveLock(body)
    }

    /// Runs `body` holding this client's lock (``KeyringLock`` named after the prefix), shared
    /// by every process of the user that reaches this keyring, whatever its environment.
    func exclusively<R>(_ body: () throws -> R) throws -> R {
        let (prefix, timeout) = (servicePrefix, secretService.timeout)
        return try SyncBridge.run { try await KeyringLock.named(prefix, timeout: timeout) }.withExclusiveLock(body)
    }

    /// Removes the mechanism when it owns no notification any more (see
    /// ``removeAccount(account:)``).
    @discardableResult public func removeMechanism(mechanism: Mechanism) -> Bool {
        diagnostics.attempt("removeMechanism") { try exclusively { try removeMechanismLocked(mechanism.mechanismUUID) } } ?? false
    }

    public func getMechanismsForAccount(account: Account) -> [Mechanism] {
        records(Mechanism.self, ["service": service("mechanism"), "issuer": account.issuer, "accountName": account.accountName],
                operation: "getMechanismsForAccount") { "mechanism/\($0.mechanismUUID)" }
            .sorted(by: RecordOrder.mechanisms)
    }

    public func getMechanismForUUID(uuid: String) -> Mechanism? {
        single(Mechanism.self, ["service": service("mechanism"), "uuid": uuid], operation: "getMechanismForUUID") { "mechanism/\($0.mechanismUUID)" }
    }

    // MARK: - Notifications

    @discardableResult public func setNotification(notification: PushNotification) -> Bool {
        store(notification, identity: "notification/\(notification.identifier)", attributes: attributes(notification),
              label: "Push notification \(notification.messageId)", operation: "setNotification")
    }

    @discardableResult public func removeNotification(notification: PushNotification) -> Bool {
        remove(attributes(notification), operation: "removeNotification")
    }

    public func getAllNotificationsForMechanism(mechanism: Mechanism) -> [PushNotification] {
        records(PushNotification.self, ["service": service("notification"), "mechanismUUID": mechanism.mechanismUUID],
                operation: "getAllNotificationsForMechanism") { "notification/\($0.identifier)" }
            .sorted(by: RecordOrder.notifications)
    }

    public func getAllNotifications() -> [PushNotification] {
        guard let found = diagnostics.attempt("getAllNotifications", {
            try listing([ListingSearch(attributes: ["service": service("notification")], loadSecrets: true)])
        }) else { return [] }
        return listedRecords(PushNotification.self, found[0], operation: "getAllNotifications") { "notification/\($0.identifier)" }
            .sorted(by: RecordOrder.notifications)
    }

    @discardableResult public func isEmpty() -> Bool {
        diagnostics.attempt("isEmpty") {
            let secretService = self.secretService
            let services = ["account", "mechanism", "notification"].map(service)
            return try SyncBridge.run {
                for service in services where try await secretService.count(["service": service]) > 0 { return false }
                return true
            }
        } ?? false
    }

    // MARK: - Push device token

    @discardableResult public func setPushDeviceToken(_ token: PushDeviceToken) -> Bool {
        store(token, identity: "deviceToken", attributes: ["service": service("deviceToken")], label: "Push device token", operation: "setPushDeviceToken")
    }

    public func getPushDeviceToken() -> PushDeviceToken? {
        single(PushDeviceToken.self, ["service": service("deviceToken")], operation: "getPushDeviceToken") { _ in "deviceToken" }
    }

    @discardableResult public func removePushDeviceToken() -> Bool {
        remove(["service": service("deviceToken")], operation: "removePushDeviceToken")
    }

    // MARK: - Items

    func service(_ kind: String) -> String { "\(servicePrefix).\(kind)" }

    private func attributes(_ account: Account) -> [String: String] {
        ["service": service("account"), "issuer": account.issuer, "accountName": account.accountName]
    }

    private func attributes(_ mechanism: Mechanism) -> [String: String] {
        ["service": service("mechanism"), "uuid": mechanism.mechanismUUID, "issuer": mechanism.issuer,
         "accountName": mechanism.accountName, "type": mechanism.type.rawValue]
    }

    private func attributes(_ notification: PushNotification) -> [String: String] {
        ["service": service("notification"), "mechanismUUID": notification.mechanismUUID, "messageId": notification.messageId]
    }

    func search(_ attributes: [String: String], loadSecrets: Bool) throws -> [SecretService.Item] {
        let secretService = self.secretService
        return try SyncBridge.run { try await secretService.search(attributes, loadSecrets: loadSecrets) }
    }

    /// Stores one item holding the lock, so it never lands between another process's read and
    /// write (nor brings back what another process just removed from under a read).
    private func store<T: Encodable>(_ value: T, identity: String, attributes: [String: String], label: String, operation: String) -> Bool {
        diagnostics.attempt(operation) {
            try exclusively { try storeItem(value, identity: identity, attributes: attributes, label: label) }
            return true
        } ?? false
    }

    func storeItem<T: Encodable>(_ value: T, identity: String, attributes: [String: String], label: String) throws {
        try storeText(String(decoding: try JSONEncoder().encode(value), as: UTF8.self), identity: identity, attributes: attributes, label: label)
    }

    /// Stores `text` sealed and bound to `identity` (the lock held).
    func storeText(_ text: String, identity: String, attributes: [String: String], label: String) throws {
        let sealed = try sealer.seal(text, for: identity)
        let secretService = self.secretService
        try SyncBridge.run {
            try await secretService.store(sealed, attributes: attributes, label: "\(label) (Coffer)", contentType: "application/octet-stream")
        }
    }

    /// Removes the items with `attributes`, holding the lock.
    private func remove(_ attributes: [String: String], operation: String) -> Bool {
        diagnostics.attempt(operation) { try exclusively { try removeItems(attributes) } > 0 } ?? false
    }

    func clearItems(_ attributes: [String: String]) throws -> Int {
        let secretService = self.secretService
        return try SyncBridge.run { try await secretService.clear(attributes) }
    }

    /// Every readable record matching `attributes`. Each item must open under the identity its
    /// own attributes name (`identity`), and the decoded record must have that identity too:
    /// a sealed record copied onto another object's item fails instead of being returned.
    private func records<T: Decodable>(
        _ type: T.Type, _ attributes: [String: String], operation: String, identity: @escaping (T) -> String
    ) -> [T] {
        records(type, diagnostics.attempt(operation) { try search(attributes, loadSecrets: true) } ?? [], operation: operation, identity: identity)
    }

    /// Every readable record among `items` (found with their secrets), checked as above.
    private func records<T: Decodable>(
        _ type: T.Type, _ items: [SecretService.Item], operation: String, identity: @escaping (T) -> String
    ) -> [T] {
        // Every item's secret opened in one trip to the encryptor.
        let opened = sealer.open(items.map { ($0.secret ?? Data(), Self.identity(of: $0.attributes)) })
        return zip(items, opened).compactMap { item, json in
            diagnostics.readable(operation, item.label) { () throws -> T in try decode(T.self, item, json, identity: identity) }
        }
    }

    /// Every readable record among items a ``listing(_:)`` found, checked as above. An item that
    /// does not open under the attributes the index gave is judged again by the attributes and
    /// label it has now, and reported by them.
    private func listedRecords<T: Decodable>(
        _ type: T.Type, _ items: [SecretService.Item], operation: String, identity: @escaping (T) -> String
    ) -> [T] {
        let opened = sealer.open(items.map { ($0.secret ?? Data(), Self.identity(of: $0.attributes)) })
        var found: [T] = []
        var failed: [SecretService.Item] = []
        for (item, json) in zip(items, opened) {
            if let record = try? decode(T.self, item, json, identity: identity) { found.append(record) } else { failed.append(item) }
        }
        return found + records(type, relabelled(failed), operation: operation, identity: identity)
    }

    /// The text sealed in `item` under `identity`, throwing why it cannot be read.
    func openText(_ item: SecretService.Item, identity: String) throws -> String {
        guard !item.isLocked else { throw KeychainError.locked }
        return try sealer.open([(item.secret ?? Data(), identity)])[0].get()
    }

    /// Opens one item (see ``records(_:_:operation:identity:)``), throwing why it cannot be read.
    func open<T: Decodable>(_ type: T.Type, _ item: SecretService.Item, identity: @escaping (T) -> String) throws -> T {
        try decode(T.self, item, sealer.open([(item.secret ?? Data(), Self.identity(of: item.attributes))])[0], identity: identity)
    }

    /// The record in an opened item, after checking that it is the object the item's attributes
    /// name: its identity (byte for byte) and, for mechanisms, every attribute a lookup uses, so
    /// an item whose `issuer` or `type` attribute was changed is not shown under another name.
    private func decode<T: Decodable>(
        _ type: T.Type, _ item: SecretService.Item, _ json: Result<String, any Error>, identity: (T) -> String
    ) throws -> T {
        guard !item.isLocked else { throw KeychainError.locked }
        guard item.secret != nil else {
            throw StorageError.corrupted(location: item.label, reason: "the keyring returned the item without its secret")
        }
        let expected = Self.identity(of: item.attributes)
        let record = try ValueCoding.decode(T.self, from: Data(try json.get().utf8), location: item.label)
        guard identity(record).utf8.elementsEqual(expected.utf8) else {
            throw StorageError.identityMismatch(location: item.label, expected: expected, found: identity(record))
        }
        if let mechanism = record as? Mechanism, attributes(mechanism).contains(where: { item.attributes[$0.key] != $0.value }) {
            throw StorageError.identityMismatch(location: item.label, expected: "the mechanism its attributes name",
                                                found: "a mechanism with other issuer, account or type attributes")
        }
        return record
    }

    private func single<T: Decodable>(
        _ type: T.Type, _ attributes: [String: String], operation: String, identity: @escaping (T) -> String
    ) -> T? {
        let found = records(type, attributes, operation: operation, identity: identity)
        guard found.count <= 1 else {
            _ = diagnostics.attempt(operation) { () throws -> Void in
                throw KeychainError.ambiguous(attributes: attributes, count: found.count)
            }
            return nil
        }
        return found.first
    }

    /// The identity an item's attributes name, in the form records are sealed under.
    private static func identity(of attributes: [String: String]) -> String {
        let kind = attributes["service"].map { String($0.split(separator: ".").last ?? "") } ?? ""
        switch kind {
        case "account":
            return "account/" + Account.identifier(issuer: attributes["issuer"] ?? "", accountName: attributes["accountName"] ?? "")
        case "mechanism":
            return "mechanism/" + (attributes["uuid"] ?? "")
        case "notification":
            return "notification/" + IdentifierCoding.join([attributes["mechanismUUID"] ?? "", attributes["messageId"] ?? ""])
        case "counters":
            return "counters"
        default:
            return "deviceToken"
        }
    }
}

/// Stands in for an encryptor that could not be made: every call throws the reason.
struct UnusableEncryptor: Encryptor {
    let reason: KeychainError

    func encrypt(data: Data) async throws -> Data { throw EncryptorError.failedToEncrypt(cause: reason) }
    func decrypt(data: Data) async throws -> Data { throw EncryptorError.failedToDecrypt(cause: reason) }
}

extension AccountKey {
    /// The account an item belongs to, by its `issuer` and `accountName` attributes.
    init(owning item: SecretService.Item) {
        self.init(issuer: item.attributes["issuer"] ?? "", accountName: item.attributes["accountName"] ?? "")
    }
}
