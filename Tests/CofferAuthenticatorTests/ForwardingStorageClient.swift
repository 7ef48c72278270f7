import CofferAuthenticator

/// A real MemoryStorageClient behind every call; fault-injecting test clients subclass it and
/// override the one call they break. With `keepsPushDeviceToken: false` it is a client written
/// to the spec alone, which keeps no push device token (the protocol's defaults).
class ForwardingStorageClient: StorageClient {
    let inner = MemoryStorageClient()
    let keepsPushDeviceToken: Bool

    init(keepsPushDeviceToken: Bool = true) { self.keepsPushDeviceToken = keepsPushDeviceToken }

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
    @discardableResult func setPushDeviceToken(_ token: PushDeviceToken) -> Bool {
        keepsPushDeviceToken && inner.setPushDeviceToken(token)
    }
    func getPushDeviceToken() -> PushDeviceToken? { keepsPushDeviceToken ? inner.getPushDeviceToken() : nil }
    @discardableResult func removePushDeviceToken() -> Bool { keepsPushDeviceToken && inner.removePushDeviceToken() }
}
