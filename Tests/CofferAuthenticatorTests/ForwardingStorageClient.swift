import CofferAuthenticator

/// A real MemoryStorageClient behind every call; fault-injecting test clients subclass it and
/// override the one call they break.
class ForwardingStorageClient: StorageClient {
    let inner = MemoryStorageClient()

    @discardableResult func setAccount(account: Account) -> Bool { inner.setAccount(account: account) }
    @discardableResult func removeAccount(account: Account) -> Bool { inner.removeAccount(account: account) }
    func getAccount(accountIdentifier: String) -> Account? { inner.getAccount(accountIdentifier: accountIdentifier) }
    func getAllAccounts() -> [Account] { inner.getAllAccounts() }
    @discardableResult func setMechanism(mechanism: Mechanism) -> Bool { inner.setMechanism(mechanism: mechanism) }
    @discardableResult func removeMechanism(mechanism: Mechanism) -> Bool { inner.removeMechanism(mechanism: mechanism) }
    func getMechanismsForAccount(account: Account) -> [Mechanism] { inner.getMechanismsForAccount(account: account) }
    func getMechanismForUUID(uuid: String) -> Mechanism? { inner.getMechanismForUUID(uuid: uuid) }
    @discardableResult func setNotification(notification: PushNotification) -> Bool { inner.setNotification(notification: notification) }
    @discardableResult func removeNotification(notification: PushNotification) -> Bool { inner.removeNotification(notification: notification) }
    func getAllNotificationsForMechanism(mechanism: Mechanism) -> [PushNotification] {
        inner.getAllNotificationsForMechanism(mechanism: mechanism)
    }
    @discardableResult func isEmpty() -> Bool { inner.isEmpty() }
}
