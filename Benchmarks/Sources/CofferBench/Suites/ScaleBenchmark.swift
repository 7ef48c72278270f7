import CofferAuthenticator
import Foundation
import CofferStorage

/// P5: the authenticator's stores at scale. Loads `accounts` accounts with three mechanisms each
/// (HOTP, TOTP, push) and `notificationsPerPush` notifications per push mechanism, then times
/// every `StorageClient` lookup with keys drawn at random.
struct ScaleBenchmark {
    var directory: URL
    var accounts: Int
    var notificationsPerPush: Int
    var lookups: Int

    func runSQLite(into report: Report) throws {
        let path = directory.appendingPathComponent("scale.sqlite").path
        let keyStore = MemoryKeyStore()
        let client = try SQLiteStorageClient(path: path, encryptor: AESGCMEncryptor(keyAlias: "scale", keyStore: keyStore))
        let fixture = Fixture(accounts: accounts, notificationsPerPush: notificationsPerPush)
        let label = "SQLite \(Format.count(accounts)) accts/\(Format.count(fixture.mechanismCount)) mechs/\(Format.count(fixture.notificationCount)) notifs"

        let load = try Clock.time {
            for chunk in stride(from: 0, to: accounts, by: 1_000) {
                let range = chunk..<min(chunk + 1_000, accounts)
                try client.storeAll(accounts: range.map(fixture.account), mechanisms: range.flatMap(fixture.mechanisms),
                                    notifications: range.flatMap(fixture.notifications))
            }
        }
        report.add(Row(id: "P5", measurement: "\(label): load (storeAll, 1k accounts per transaction)",
                       coffer: Timings([load])))
        let reopen = try measureEach(count: 5, warmup: 1) { _ in
            _ = try SQLiteStorageClient(path: path, encryptor: AESGCMEncryptor(keyAlias: "scale", keyStore: keyStore))
        }
        report.add(Row(id: "P5", measurement: "\(label): open", coffer: reopen))
        try lookups(client, fixture: fixture, label: label, target: .medianAtMost(1_000_000), into: report)
        let writes = measureEach(count: 100) { index in
            _ = client.setNotification(notification: fixture.notification(account: index % accounts, number: 1_000_000 + index))
        }
        report.add(Row(id: "P5", measurement: "\(label): setNotification (one transaction each)", coffer: writes))
        let all = measureEach(count: 1, warmup: 0) { _ in _ = client.getAllNotifications() }
        report.add(Row(id: "P5", measurement: "\(label): getAllNotifications (listing)", coffer: all,
                       note: "lists and decrypts every notification; no target"))
        guard client.unreadableRecordCount == 0, client.lastError == nil else {
            throw BenchFailure("the SQLite client failed during the benchmark: \(String(describing: client.lastError))")
        }
    }

    /// The keychain client holds one keyring item per record; `accounts` here is a third of the
    /// mechanism count.
    func runKeychain(into report: Report) throws {
        let fixture = Fixture(accounts: accounts, notificationsPerPush: notificationsPerPush)
        let client = KeychainStorageClient(
            encryptor: AESGCMEncryptor(keyAlias: "scale", keyStore: MemoryKeyStore()),
            servicePrefix: "org.coffer.bench.scale\(fixture.mechanismCount)")
        let label = "Keychain \(Format.count(fixture.mechanismCount)) mechs"
        let load = try Clock.time {
            for index in 0..<accounts {
                guard client.setAccount(account: fixture.account(index)),
                      fixture.mechanisms(index).allSatisfy({ client.setMechanism(mechanism: $0) }),
                      fixture.notifications(index).allSatisfy({ client.setNotification(notification: $0) }) else {
                    throw BenchFailure("the keychain client failed to store: \(String(describing: client.lastError))")
                }
            }
        }
        report.add(Row(id: "P5", measurement: "\(label): load (one item per call)", coffer: Timings([load])))
        try lookups(client, fixture: fixture, label: label, target: .none, listingTarget: .medianAtMost(50_000_000), into: report)
        // The listings, with the item index (KeyringItemIndex) the first one wrote; P10's target.
        let names = try measureEach(count: 5, warmup: 1) { _ in
            guard client.getAllAccountNames().count == accounts else { throw BenchFailure("\(label): getAllAccountNames lost accounts") }
        }
        report.add(Row(id: "P5", measurement: "\(label): getAllAccountNames (what `coffer code` lists)", coffer: names,
                       target: .medianAtMost(50_000_000)))
        let notifications = try measureEach(count: 5, warmup: 1) { _ in
            guard client.getAllNotifications().count == fixture.notificationCount else {
                throw BenchFailure("\(label): getAllNotifications lost notifications")
            }
        }
        report.add(Row(id: "P5", measurement: "\(label): getAllNotifications (listing)", coffer: notifications,
                       note: "reads every notification's secret; no target"))
        guard client.unreadableRecordCount == 0 else { throw BenchFailure("\(label): unreadable records") }
    }

    private func lookups(_ client: some StorageClient & StorageClientDiagnostics, fixture: Fixture, label: String,
                         target: Target, listingTarget: Target? = nil, into report: Report) throws {
        var random = SystemRandomNumberGenerator()
        func anyAccount() -> Int { Int.random(in: 0..<accounts, using: &random) }
        func check(_ found: Bool, _ what: String) throws {
            guard found else { throw BenchFailure("\(label): \(what) found nothing") }
        }
        let operations: [(String, () throws -> Void)] = [
            ("getAccount", { try check(client.getAccount(accountIdentifier: fixture.account(anyAccount()).identifier) != nil, "getAccount") }),
            ("getMechanismsForAccount", { try check(client.getMechanismsForAccount(account: fixture.account(anyAccount())).count == 3, "getMechanismsForAccount") }),
            ("getMechanismForUUID", { try check(client.getMechanismForUUID(uuid: Fixture.uuid(anyAccount(), .totp)) != nil, "getMechanismForUUID") }),
            ("getAllNotificationsForMechanism", {
                let account = anyAccount()
                try check(client.getAllNotificationsForMechanism(mechanism: fixture.push(account)).count == notificationsPerPush, "getAllNotificationsForMechanism")
            }),
            ("getNotification", {
                let account = anyAccount()
                try check(client.getNotification(messageId: Fixture.messageId(account, 0), mechanism: fixture.push(account)) != nil, "getNotification")
            }),
            ("isEmpty", { try check(!client.isEmpty(), "isEmpty") }),
        ]
        for (name, operation) in operations {
            let timings = try measureEach(count: lookups) { _ in try operation() }
            report.add(Row(id: "P5", measurement: "\(label): \(name)", coffer: timings, target: target))
        }
        let listing = try measureEach(count: 5, warmup: 1) { _ in try check(client.getAllAccounts().count == accounts, "getAllAccounts") }
        report.add(Row(id: "P5", measurement: "\(label): getAllAccounts (listing)", coffer: listing, target: listingTarget ?? .none,
                       note: listingTarget == nil ? "lists every account; no target" : ""))
        guard client.lastError == nil else { throw BenchFailure("\(label): \(String(describing: client.lastError))") }
    }
}

/// The records of the scale benchmark, made from their index so that any can be named again.
struct Fixture {
    var accounts: Int
    var notificationsPerPush: Int
    var mechanismCount: Int { accounts * 3 }
    var notificationCount: Int { accounts * notificationsPerPush }
    private let added = Date(timeIntervalSinceReferenceDate: 800_000_000)

    func account(_ index: Int) -> Account {
        Account(issuer: "Issuer \(index % 97)", accountName: "user\(index)@example.com", timeAdded: added + Double(index))
    }

    static func uuid(_ index: Int, _ type: MechanismType) -> String {
        "\(type.rawValue)-\(String(index, radix: 16))"
    }

    static func messageId(_ account: Int, _ number: Int) -> String { "message-\(account)-\(number)" }

    func mechanisms(_ index: Int) -> [Mechanism] {
        let account = account(index)
        let secret = Base32.encode(Data((0..<20).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }))
        return [
            Mechanism(mechanismUUID: Self.uuid(index, .hotp), issuer: account.issuer, accountName: account.accountName,
                      type: .hotp, secret: secret, counter: UInt64(index), timeAdded: account.timeAdded),
            Mechanism(mechanismUUID: Self.uuid(index, .totp), issuer: account.issuer, accountName: account.accountName,
                      type: .totp, secret: secret, timeAdded: account.timeAdded),
            push(index),
        ]
    }

    func push(_ index: Int) -> Mechanism {
        let account = account(index)
        return Mechanism(
            mechanismUUID: Self.uuid(index, .push), issuer: account.issuer, accountName: account.accountName, type: .push,
            secret: "push-secret-\(index)", uid: "uid-\(index)", resourceId: "resource-\(index)", timeAdded: account.timeAdded,
            registrationEndpoint: URL(string: "https://example.com/register"),
            authenticationEndpoint: URL(string: "https://example.com/authenticate"))
    }

    func notifications(_ index: Int) -> [PushNotification] {
        (0..<notificationsPerPush).map { notification(account: index, number: $0) }
    }

    func notification(account index: Int, number: Int) -> PushNotification {
        PushNotification(
            messageId: Self.messageId(index, number), mechanismUUID: Self.uuid(index, .push),
            challenge: "challenge-\(index)-\(number)-" + String(repeating: "x", count: 20), ttl: 120,
            timeAdded: added + Double(number), message: "Sign in to Example?", pushType: "default")
    }
}

extension Format {
    static func count(_ value: Int) -> String {
        value >= 1_000_000 && value % 1_000_000 == 0 ? "\(value / 1_000_000)M"
            : value >= 1_000 && value % 1_000 == 0 ? "\(value / 1_000)k" : "\(value)"
    }
}
