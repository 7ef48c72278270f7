import CofferStorageTesting
import CofferAuthenticator
import Dispatch
import Foundation

/// A conformance suite for `Authenticator.StorageClient` implementations: the project runs it
/// against every built-in client, and you can run it against yours.
///
/// ```swift
/// @Test func myClientConforms() async throws {
///     try await StorageClientConformance(makeClient: { MyClient() }).run()
/// }
/// ```
///
/// The factory must return an empty client that shares nothing with the others it makes. Every
/// check that stores something removes it when it passes.
public struct StorageClientConformance: Sendable {
    /// Makes a fresh, empty client.
    public let makeClient: @Sendable () throws -> any StorageClient & Sendable

    /// Creates the suite.
    public init(makeClient: @escaping @Sendable () throws -> any StorageClient & Sendable) {
        self.makeClient = makeClient
    }

    /// Every check, in order. Stops at the first failure.
    public func run() async throws {
        try checkEmpty()
        try checkAccounts()
        try checkAccountDetails()
        try checkIdentifiersDoNotCollide()
        try checkMechanisms()
        try checkNotifications()
        try checkPushDeviceToken()
        try await checkConcurrentWriters()
    }

    let time = Date(timeIntervalSince1970: 1_700_000_000)

    /// A fresh client is empty.
    public func checkEmpty() throws {
        let client = try makeClient()
        try expect(client.isEmpty(), "empty", "a fresh client is not empty")
        try expect(client.getAllAccounts().isEmpty, "empty", "a fresh client lists accounts")
        try expect(client.getMechanismForUUID(uuid: "nope") == nil, "empty", "a fresh client finds a mechanism")
    }

    /// Accounts round-trip with every field, update in place and are removed.
    public func checkAccounts() throws {
        let client = try makeClient()
        let account = Account(
            issuer: "Issuer", accountName: "alice", displayIssuer: "Shown", displayAccountName: "Alice",
            imageURL: "https://example.com/logo.png", backgroundColor: "#112233", timeAdded: time,
            policies: "{\"p\":1}", lockingPolicy: nil, isLocked: false)
        try expect(client.setAccount(account: account), "accounts", "setAccount returned false")
        try expect(client.getAccount(accountIdentifier: account.identifier) == account, "accounts", "the stored account differs")
        try expect(!client.isEmpty(), "accounts", "isEmpty is true after setAccount")
        var locked = account
        locked.isLocked = true
        locked.lockingPolicy = "deviceTampering"
        try expect(client.setAccount(account: locked), "accounts", "updating an account returned false")
        try expect(client.getAllAccounts() == [locked], "accounts", "an update did not replace the account: \(client.getAllAccounts().count) accounts")
        try expect(client.getAllAccountNames() == [AccountNames(account)], "accounts",
                   "getAllAccountNames did not give the account's names, shown ones included")
        try expect(client.removeAccount(account: locked), "accounts", "removeAccount returned false")
        try expect(client.getAccount(accountIdentifier: account.identifier) == nil, "accounts", "a removed account is still found")
        try expect(client.isEmpty(), "accounts", "isEmpty is false after removing everything")
    }

    /// An account's details (note, groups, favourite, icon) round-trip, survive an update of
    /// the other fields, change, and go when set to `nil`.
    public func checkAccountDetails() throws {
        let client = try makeClient()
        let details = AccountDetails(note: "recovery: 1111-2222\nsecond line ✓", groups: ["Work", "Mail"], isFavorite: true, icon: "github")
        let account = Account(issuer: "Noted", accountName: "bob", timeAdded: time, details: details)
        try expect(client.setAccount(account: account), "details", "setAccount with details returned false")
        try expect(client.getAccount(accountIdentifier: account.identifier)?.details == details, "details", "the details did not round-trip")
        try expect(client.getAllAccounts().first?.details == details, "details", "getAllAccounts lost the details")
        let locked = try client.updateAccount(accountIdentifier: account.identifier) { $0.isLocked = true }
        try expect(locked.details == details && client.getAccount(accountIdentifier: account.identifier)?.details == details,
                   "details", "updating another field lost the details")
        let changed = AccountDetails(note: "new note")
        try client.updateAccount(accountIdentifier: account.identifier) { $0.details = changed }
        try expect(client.getAccount(accountIdentifier: account.identifier)?.details == changed, "details", "changed details were not stored")
        var cleared = account
        cleared.details = nil
        try expect(client.setAccount(account: cleared), "details", "setAccount without details returned false")
        try expect(client.getAccount(accountIdentifier: account.identifier)?.details == nil, "details", "details set to nil are still there")
        try expect(client.removeAccount(account: cleared), "details", "removeAccount returned false")
        try clear(client, "details")
    }

    /// ("a-b", "c") and ("a", "b-c") are two accounts.
    public func checkIdentifiersDoNotCollide() throws {
        let client = try makeClient()
        let first = Account(issuer: "a-b", accountName: "c", timeAdded: time)
        let second = Account(issuer: "a", accountName: "b-c", timeAdded: time.addingTimeInterval(1))
        client.setAccount(account: first)
        client.setAccount(account: second)
        try expect(client.getAllAccounts().count == 2, "identifiers", "two accounts whose joined names collide were merged")
        try expect(client.getAllAccountNames() == client.getAllAccounts().map(AccountNames.init), "identifiers",
                   "getAllAccountNames differs from the names of getAllAccounts: \(client.getAllAccountNames().map(\.identifier))")
        try expect(client.getAccount(accountIdentifier: first.identifier) == first, "identifiers", "wrong account for \(first.identifier)")
        try expect(client.getAccount(accountIdentifier: second.identifier) == second, "identifiers", "wrong account for \(second.identifier)")
        try clear(client, "identifiers")
    }

    /// Mechanisms round-trip, belong to their account only, store a missing owner, update and
    /// are removed.
    public func checkMechanisms() throws {
        let client = try makeClient()
        let totp = Mechanism(mechanismUUID: "uuid-totp", issuer: "Issuer", accountName: "alice", type: .totp,
                             secret: "JBSWY3DPEHPK3PXP", algorithm: .sha256, digits: 8, period: 60, timeAdded: time)
        try expect(client.setMechanism(mechanism: totp), "mechanisms", "setMechanism returned false")
        let owner = client.getAccount(accountIdentifier: Account.identifier(issuer: "Issuer", accountName: "alice"))
        try expect(owner != nil, "mechanisms", "setMechanism did not store the missing owning account")
        try expect(client.getMechanismForUUID(uuid: "uuid-totp") == totp, "mechanisms", "the stored mechanism differs")

        let other = Mechanism(mechanismUUID: "uuid-other", issuer: "Issuer", accountName: "bob", type: .hotp,
                              secret: "GEZDGNBV", counter: 5, timeAdded: time)
        client.setMechanism(mechanism: other)
        try expect(client.getMechanismsForAccount(account: owner!) == [totp], "mechanisms", "an account's mechanisms include another's")

        var advanced = other
        advanced.counter = 6
        client.setMechanism(mechanism: advanced)
        try expect(client.getMechanismForUUID(uuid: "uuid-other")?.counter == 6, "mechanisms", "an updated counter was not stored")

        let push = Mechanism(mechanismUUID: "uuid-push", issuer: "Issuer", accountName: "alice", type: .push,
                             secret: "c2VjcmV0", timeAdded: time.addingTimeInterval(1),
                             registrationEndpoint: URL(string: "https://example.com/r"),
                             authenticationEndpoint: URL(string: "https://example.com/a"), messageId: "m1", challenge: "Y2g=")
        client.setMechanism(mechanism: push)
        try expect(client.getMechanismForUUID(uuid: "uuid-push") == push, "mechanisms", "a push mechanism differs after storing")
        try expect(client.getMechanismsForAccount(account: owner!).count == 2, "mechanisms", "alice should have two mechanisms")
        try expect(client.removeMechanism(mechanism: totp), "mechanisms", "removeMechanism returned false")
        try expect(client.getMechanismForUUID(uuid: "uuid-totp") == nil, "mechanisms", "a removed mechanism is still found")
        try expect(client.getMechanismsForAccount(account: owner!) == [push], "mechanisms", "alice's mechanisms after removal")
        try clear(client, "mechanisms")
    }

    /// Notifications round-trip per mechanism and are removed.
    public func checkNotifications() throws {
        let client = try makeClient()
        let push = Mechanism(mechanismUUID: "uuid-push", issuer: "I", accountName: "a", type: .push, secret: "c2VjcmV0", timeAdded: time)
        let other = Mechanism(mechanismUUID: "uuid-push-2", issuer: "I", accountName: "b", type: .push, secret: "c2VjcmV0", timeAdded: time)
        client.setMechanism(mechanism: push)
        client.setMechanism(mechanism: other)
        let first = PushNotification(messageId: "m1", mechanismUUID: "uuid-push", challenge: "Y2g=", ttl: 120, timeAdded: time,
                                     loadBalanceKey: "lb", message: "Log in?", customPayload: "{}", numbersChallenge: "1,2,3",
                                     contextInfo: "{\"location\":\"x\"}", pushType: "challenge")
        let second = PushNotification(messageId: "m2", mechanismUUID: "uuid-push", challenge: "Y2g=", timeAdded: time.addingTimeInterval(5))
        let foreign = PushNotification(messageId: "m1", mechanismUUID: "uuid-push-2", challenge: "Y2g=", timeAdded: time)
        for notification in [first, second, foreign] {
            try expect(client.setNotification(notification: notification), "notifications", "setNotification returned false")
        }
        try expect(client.getAllNotificationsForMechanism(mechanism: push) == [first, second], "notifications",
                   "the mechanism's notifications differ")
        try expect(client.getNotification(messageId: "m1", mechanism: other) == foreign, "notifications",
                   "the same message id under another mechanism is another notification")
        try expect(client.getAllNotifications().count == 3, "notifications", "getAllNotifications misses some")
        var answered = first
        answered.pending = false
        answered.approved = true
        client.setNotification(notification: answered)
        try expect(client.getNotification(messageId: "m1", mechanism: push) == answered, "notifications", "an update was not stored")
        try expect(client.removeNotification(notification: answered), "notifications", "removeNotification returned false")
        try expect(client.getAllNotificationsForMechanism(mechanism: push) == [second], "notifications", "removal left the notification")
        try clear(client, "notifications")
    }

    /// The push device token round-trips when the client supports it.
    public func checkPushDeviceToken() throws {
        let client = try makeClient()
        let token = PushDeviceToken(tokenId: "device-token", timeAdded: time)
        guard client.setPushDeviceToken(token) else { return }  // a spec-only client keeps no token
        try expect(client.getPushDeviceToken() == token, "pushDeviceToken", "the stored token differs")
        try expect(client.removePushDeviceToken(), "pushDeviceToken", "removePushDeviceToken returned false")
        try expect(client.getPushDeviceToken() == nil, "pushDeviceToken", "a removed token is still returned")
    }

    /// 8 threads add 25 accounts with a mechanism each at once; nothing is lost.
    ///
    /// The protocol is synchronous, so the writers are threads, not tasks: blocking calls made
    /// from tasks would hold Swift's cooperative threads.
    public func checkConcurrentWriters() async throws {
        let client = try makeClient()
        let time = self.time
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: 8) { task in
                    for index in 0..<25 {
                        client.setMechanism(mechanism: Mechanism(
                            mechanismUUID: "t\(task)-\(index)", issuer: "Issuer \(task)", accountName: "user \(index)",
                            type: .totp, secret: "JBSWY3DPEHPK3PXP", timeAdded: time))
                    }
                }
                done.resume()
            }
        }
        try expect(client.getAllAccounts().count == 200, "concurrentWriters", "\(client.getAllAccounts().count) of 200 accounts stored")
        for task in 0..<8 {
            for index in 0..<25 where client.getMechanismForUUID(uuid: "t\(task)-\(index)") == nil {
                throw ConformanceFailure(check: "concurrentWriters", message: "mechanism t\(task)-\(index) was lost")
            }
        }
        try clear(client, "concurrentWriters")
    }

    /// Removes every notification, mechanism and account a check stored, and checks the client
    /// is empty afterwards: the suite leaves nothing behind in a shared keyring or database
    /// (gnome-keyring rewrites its whole file on every change, so leftovers slow every later
    /// write of every program using it).
    private func clear(_ client: any StorageClient, _ check: String) throws {
        for notification in client.getAllNotifications() {
            try expect(client.removeNotification(notification: notification), check, "removing a notification returned false")
        }
        for account in client.getAllAccounts() {
            for mechanism in client.getMechanismsForAccount(account: account) {
                try expect(client.removeMechanism(mechanism: mechanism), check, "removing a mechanism returned false")
            }
            try expect(client.removeAccount(account: account), check, "removing an account returned false")
        }
        try expect(client.isEmpty(), check, "removing every notification, mechanism and account left the client not empty")
    }

    private func expect(_ condition: Bool, _ check: String, _ message: @autoclosure () -> String) throws {
        if !condition { throw ConformanceFailure(check: check, message: message()) }
    }
}
