import CofferAuthenticator
import CofferAuthMigration
import CofferMFACommons
import CofferOath
import CofferPush
import CofferStorage
import Foundation
import Synchronization
import TestSupport
import Testing

/// A policy whose answer the test chooses.
struct Switch: MfaPolicy {
    let name = "switch"
    let compliant: @Sendable () -> Bool
    func evaluate(data: [String: Any]?) async throws -> Bool { compliant() }
}

@Suite("AuthMigration: the legacy StorageClient into OathStorage and PushStorage")
struct AuthMigrationTests {
    /// RFC 4226's key in base32.
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    static let pushSecret = "b3VyIHNoYXJlZCBzZWNyZXQgb2YgMzIgYnl0ZXMhIQ=="
    static let added = Date(timeIntervalSinceReferenceDate: 700_000_000)

    /// A legacy store as a ForgeRock app leaves it: a HOTP and a TOTP mechanism of one account, a
    /// push mechanism with two notifications, a Steam account, a device token.
    static func legacyStore(_ client: any StorageClient) {
        let bank = Account(issuer: "Bank", accountName: "alice", displayIssuer: "Bank Inc", imageURL: "https://bank.example/logo.png",
                           timeAdded: added)
        let am = Account(issuer: "AM", accountName: "alice", timeAdded: added)
        let steam = Account(issuer: "Steam", accountName: "gamer", timeAdded: added)
        for account in [bank, am, steam] { client.setAccount(account: account) }
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "hotp-1", issuer: "Bank", accountName: "alice", type: .hotp,
                                                 secret: secret, counter: 7, uid: "user-1", timeAdded: added))
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "totp-1", issuer: "Bank", accountName: "alice", type: .totp,
                                                 secret: secret, algorithm: .sha256, digits: 8, period: 60, timeAdded: added))
        client.setMechanism(mechanism: Mechanism(
            mechanismUUID: "push-1", issuer: "AM", accountName: "alice", type: .push, secret: pushSecret, uid: "user-1",
            resourceId: "resource-1", timeAdded: added,
            registrationEndpoint: URL(string: "https://am.example.com/am/json/push/sns/message?_action=register"),
            authenticationEndpoint: URL(string: "https://am.example.com/am/json/push/sns/message?_action=authenticate")))
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "steam-1", issuer: "Steam", accountName: "gamer", type: .steam,
                                                 secret: secret, digits: 5, timeAdded: added))
        client.setNotification(notification: CofferAuthenticator.PushNotification(
            messageId: "m1", mechanismUUID: "push-1", challenge: "Y2hhbGxlbmdlLTE=", ttl: 120, timeAdded: added, loadBalanceKey: "amlb=1",
            message: "Sign in?", numbersChallenge: "12,34,56", pushType: "challenge"))
        client.setNotification(notification: CofferAuthenticator.PushNotification(
            messageId: "m2", mechanismUUID: "push-1", challenge: "Y2hhbGxlbmdlLTI=", timeAdded: added.addingTimeInterval(5), pending: false,
            approved: true))
        client.setPushDeviceToken(CofferAuthenticator.PushDeviceToken(tokenId: "device-token-1", timeAdded: added))
    }

    /// The targets hold exactly what the fixture moves, once, with the HOTP counter at `counter`;
    /// the source holds only what the targets cannot (the Steam account).
    static func expectMoved(_ source: MemoryStorageClient, _ oath: any OathStorage, _ push: any PushStorage, counter: Int = 7,
                            sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let credentials = try await oath.getAllOathCredentials().sorted { $0.id < $1.id }
        #expect(credentials.map(\.id) == ["hotp-1", "totp-1"], sourceLocation: sourceLocation)
        let hotp = try #require(credentials.first)
        #expect(hotp.counter == counter && hotp.secret == secret && hotp.displayIssuer == "Bank Inc" && hotp.userId == "user-1"
                && hotp.imageURL == "https://bank.example/logo.png" && !hotp.isLocked && hotp.createdAt == added, sourceLocation: sourceLocation)
        #expect(credentials[1].oathAlgorithm == .sha256 && credentials[1].digits == 8 && credentials[1].period == 60, sourceLocation: sourceLocation)
        let pushed = try await push.getAllPushCredentials()
        #expect(pushed.map(\.id) == ["push-1"], sourceLocation: sourceLocation)
        #expect(pushed.first?.serverEndpoint == "https://am.example.com/am/json/push/sns/message" && pushed.first?.secret == pushSecret
                && pushed.first?.resourceId == "resource-1", sourceLocation: sourceLocation)
        let notifications = try await push.getAllPushNotifications()
        #expect(notifications.map(\.messageId) == ["m2", "m1"], "both carried, once each", sourceLocation: sourceLocation)
        let first = try #require(try await push.getNotificationByMessageId(messageId: "m1"))
        #expect(first.challenge == "Y2hhbGxlbmdlLTE=" && first.loadBalancer == "amlb=1" && first.pushType == .challenge && first.pending
                && first.numbersChallenge == "12,34,56" && first.credentialId == "push-1", sourceLocation: sourceLocation)
        #expect(try await push.getNotificationByMessageId(messageId: "m2")?.approved == true, sourceLocation: sourceLocation)
        #expect(try await push.getCurrentPushDeviceToken()?.token == "device-token-1", sourceLocation: sourceLocation)
        #expect(source.getAllAccounts().map(\.issuer) == ["Steam"], sourceLocation: sourceLocation)
        #expect(source.getMechanismForUUID(uuid: "steam-1") != nil && source.getPushDeviceToken() == nil
                && source.getAllNotifications().isEmpty, sourceLocation: sourceLocation)
    }

    @Test("one call moves OATH, push, notifications and the token, ids kept; what Ping cannot hold stays; a second run changes nothing")
    func moves() async throws {
        let source = MemoryStorageClient()
        Self.legacyStore(source)
        let oath = MemoryOathStorage(), push = MemoryPushStorage()
        let report = try await AuthMigration.move(from: source, oath: oath, push: push, sourceName: "legacy")
        #expect(report.oathCredentials == 2 && report.pushCredentials == 1 && report.notifications == 2 && report.pushDeviceToken)
        #expect(report.keptInSource.count == 1 && report.keptInSource[0].contains("Steam"), "\(report.keptInSource)")
        try await Self.expectMoved(source, oath, push)

        let again = try await AuthMigration.move(from: source, oath: oath, push: push, sourceName: "legacy")
        #expect(again == AuthMigration.Report(keptInSource: report.keptInSource), "nothing more to move")
        try await Self.expectMoved(source, oath, push)
        // The moved HOTP credential goes on where the legacy one stopped: counter 7, RFC 4226's eighth code.
        let client = try await OathClient.createClient { $0.storage = oath }
        #expect(try await client.generateCode("hotp-1") == "162583")
    }

    /// Fresh, empty targets of one kind: in memory, or SQLite files in `directory`.
    static func targets(_ kind: String, in directory: TemporaryDirectory) throws -> (oath: any OathCounterStorage, push: any PushStorage) {
        guard kind == "sqlite" else { return (MemoryOathStorage(), MemoryPushStorage()) }
        let name = UUID().uuidString
        let encryptor = AESGCMEncryptor(keyAlias: "targets", keyStore: FileKeyStore(directory: directory.url.appendingPathComponent("keys")))
        return (try SQLiteOathStorage(path: directory.appending("\(name)-oath.sqlite").path, encryptor: encryptor),
                try SQLitePushStorage(path: directory.appending("\(name)-push.sqlite").path, encryptor: encryptor))
    }

    @Test("killed after any write (targets' or source's) and run again: everything moved once, nothing lost, no counter lowered",
          arguments: ["memory", "sqlite"])
    func killedAnywhere(_ kind: String) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // How many writes a whole run makes.
        let probe = WriteBudget(10_000)
        let counted = MemoryStorageClient()
        Self.legacyStore(counted)
        let probeTargets = try Self.targets(kind, in: directory)
        _ = try await AuthMigration.move(from: DyingLegacyClient(counted, budget: probe), oath: DyingOathStorage(storage: probeTargets.oath, budget: probe),
                                         push: DyingPushStorage(storage: probeTargets.push, budget: probe), sourceName: "legacy")
        let used = 10_000 - (0...10_000).first { _ in !probe.spend() }!
        #expect(used > 10, "a run makes \(used) writes")
        for allowed in 0..<used {
            let source = MemoryStorageClient()
            Self.legacyStore(source)
            let (oath, push) = try Self.targets(kind, in: directory)
            let budget = WriteBudget(allowed)
            do {
                _ = try await AuthMigration.move(from: DyingLegacyClient(source, budget: budget), oath: DyingOathStorage(storage: oath, budget: budget),
                                                 push: DyingPushStorage(storage: push, budget: budget), sourceName: "legacy")
                Issue.record("a run allowed \(allowed) of \(used) writes completed")
            } catch {
                #expect(budget.exhausted, "failed for another reason after \(allowed) writes: \(error)")
            }
            // Nothing is lost at the moment of the kill: each record is in the source or moved.
            let held = Set(try await oath.getAllOathCredentials().map(\.id)).union(try await push.getAllPushCredentials().map(\.id))
            for uuid in ["hotp-1", "totp-1", "push-1"] {
                #expect(source.getMechanismForUUID(uuid: uuid) != nil || held.contains(uuid), "\(uuid) lost after \(allowed) writes")
            }
            // A second kill, at the same point of the re-run, then a run to the end.
            _ = try? await AuthMigration.move(from: source, oath: DyingOathStorage(storage: oath, budget: WriteBudget(allowed / 2)),
                                              push: DyingPushStorage(storage: push, budget: WriteBudget(allowed / 2)), sourceName: "legacy")
            _ = try await AuthMigration.move(from: source, oath: oath, push: push, sourceName: "legacy")
            try await Self.expectMoved(source, oath, push)
        }
    }

    @Test("a token registered anew in the target, a notification on a HOTP mechanism, an account locked by its own policy: moved or kept, never stuck")
    func edgeCases() async throws {
        let source = MemoryStorageClient()
        Self.legacyStore(source)
        var locked = try #require(source.getAccount(accountIdentifier: Account(issuer: "Bank", accountName: "alice").identifier))
        locked.isLocked = true
        locked.lockingPolicy = "switch"
        source.setAccount(account: locked)
        let stray = CofferAuthenticator.PushNotification(messageId: "stray", mechanismUUID: "totp-1", challenge: "c3RyYXk=")
        source.setNotification(notification: stray)
        let oath = MemoryOathStorage(), push = MemoryPushStorage()
        try await push.storePushDeviceToken(CofferPush.PushDeviceToken(token: "registered-since"))

        let report = try await AuthMigration.move(from: source, oath: oath, push: push, sourceName: "legacy")
        #expect(report.oathCredentials == 1 && report.pushCredentials == 1 && !report.pushDeviceToken)
        #expect(report.keptInSource.contains { $0.contains("notification") } && report.keptInSource.contains { $0.contains("device token") })
        #expect(source.getMechanismForUUID(uuid: "totp-1") != nil && source.getPushDeviceToken()?.tokenId == "device-token-1", "kept, not lost")
        #expect(try await push.getCurrentPushDeviceToken()?.token == "registered-since")
        let hotp = try #require(try await oath.retrieveOathCredential(credentialId: "hotp-1"))
        #expect(hotp.isLocked && hotp.lockingPolicy == "switch", "its own lock is back once the move ends")
        // A second run changes nothing and fails on nothing.
        #expect(try await AuthMigration.move(from: source, oath: oath, push: push, sourceName: "legacy").oathCredentials == 0)
    }

    @Test("a run from another store never unlocks copies of a move still in flight")
    func twoSources() async throws {
        let first = MemoryStorageClient(), second = MemoryStorageClient()
        Self.legacyStore(first)
        second.setAccount(account: Account(issuer: "Shop", accountName: "bob"))
        second.setMechanism(mechanism: Mechanism(mechanismUUID: "shop-1", issuer: "Shop", accountName: "bob", type: .totp, secret: Self.secret))
        let oath = MemoryOathStorage(), push = MemoryPushStorage()
        // The first move is killed after its OATH copies, before its source let go.
        let budget = WriteBudget(3)
        _ = try? await AuthMigration.move(from: first, oath: DyingOathStorage(storage: oath, budget: budget),
                                          push: DyingPushStorage(storage: push, budget: budget), sourceName: "phone")
        #expect(try await oath.retrieveOathCredential(credentialId: "hotp-1")?.isLocked == true)
        _ = try await AuthMigration.move(from: second, oath: oath, push: push, sourceName: "tablet")
        #expect(try await oath.retrieveOathCredential(credentialId: "hotp-1")?.isLocked == true, "still locked: its source still has it")
        #expect(try await oath.retrieveOathCredential(credentialId: "shop-1")?.isLocked == false)
        _ = try await AuthMigration.move(from: first, oath: oath, push: push, sourceName: "phone")
        let hotp = try #require(try await oath.retrieveOathCredential(credentialId: "hotp-1"))
        #expect(!hotp.isLocked && hotp.counter == 7 && first.getAllAccounts().map(\.issuer) == ["Steam"], "the first move finished")
        #expect(try await oath.getAllOathCredentials().count == 3 && second.getAllAccounts().isEmpty)
    }

    @Test("a HOTP code issued from the legacy store while it moves is carried: the copy's counter is raised before the source lets go")
    func counterCarried() async throws {
        let source = MemoryStorageClient()
        Self.legacyStore(source)
        let oath = MemoryOathStorage(), push = MemoryPushStorage()
        let legacy = DyingLegacyClient(source, budget: WriteBudget(10_000)) { client in
            _ = try? client.advanceCounter(mechanismUUID: "hotp-1")
            _ = try? client.advanceCounter(mechanismUUID: "hotp-1")
        }
        _ = try await AuthMigration.move(from: legacy, oath: oath, push: push, sourceName: "legacy")
        try await Self.expectMoved(source, oath, push, counter: 9)
        let client = try await OathClient.createClient { $0.storage = oath }
        #expect(try await client.generateCode("hotp-1") == "520489", "counter 9, never 7 or 8 again")
    }

    @Test("a different credential under a needed id is a typed conflict: nothing overwritten, nothing removed from the source")
    func conflict() async throws {
        let source = MemoryStorageClient()
        Self.legacyStore(source)
        let oath = MemoryOathStorage(), push = MemoryPushStorage()
        try await oath.storeOathCredential(OathCredential(id: "totp-1", issuer: "Other", accountName: "bob", oathType: .totp, secretKey: Self.secret))
        do {
            _ = try await AuthMigration.move(from: source, oath: oath, push: push, sourceName: "legacy")
            Issue.record("a conflicting id was overwritten")
        } catch {
            guard case .targetConflict(let what) = error else { Issue.record("\(error)"); return }
            #expect(what.contains("Bank: alice") && !what.contains(Self.secret))
        }
        #expect(try await oath.retrieveOathCredential(credentialId: "totp-1")?.issuer == "Other")
        #expect(source.getAllAccounts().count == 3 && source.getMechanismForUUID(uuid: "hotp-1")?.counter == 7 && source.getPushDeviceToken() != nil)
        // The copy made before the conflict stays locked: it issues no code while the source has it.
        #expect(try await oath.retrieveOathCredential(credentialId: "hotp-1")?.isLocked == true)
        let client = try await OathClient.createClient { $0.storage = oath }
        await #expect(throws: OathError.self) { try await client.generateCode("hotp-1") }
    }

    @Test("a passing policy does not lift the migration's lock; it lifts its own")
    func policiesKeepTheMigrationLock() async throws {
        let oath = MemoryOathStorage()
        let policies = #"{"switch":{}}"#
        var moving = OathCredential(id: "m", issuer: "I", accountName: "a", oathType: .hotp, policies: policies, secretKey: Self.secret)
        moving.lockCredential(policyName: AuthMigration.movingPolicy(from: "legacy"))
        var policyLocked = OathCredential(id: "p", issuer: "I", accountName: "b", oathType: .hotp, policies: policies, secretKey: Self.secret)
        policyLocked.lockCredential(policyName: "switch")
        try await oath.storeOathCredential(moving)
        try await oath.storeOathCredential(policyLocked)
        let client = try await OathClient.createClient { config in
            config.storage = oath
            config.policyEvaluator = MfaPolicyEvaluator.create { $0.policies = [Switch { true }] }
        }
        let listed = Dictionary(uniqueKeysWithValues: try await client.getCredentials().map { ($0.id, $0.isLocked) })
        #expect(listed == ["m": true, "p": false])
    }

    @Test("from a legacy SQLite file into SQLiteOathStorage and SQLitePushStorage: the same codes, the notifications, the token")
    func sqliteFiles() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = FileKeyStore(directory: directory.url.appendingPathComponent("keys"))
        let legacy = try SQLiteStorageClient(path: directory.appending("legacy.sqlite").path, encryptor: AESGCMEncryptor(keyAlias: "legacy", keyStore: keys))
        Self.legacyStore(legacy)
        let oath = try SQLiteOathStorage(path: directory.appending("oath.sqlite").path, encryptor: AESGCMEncryptor(keyAlias: "oath", keyStore: keys))
        let push = try SQLitePushStorage(path: directory.appending("push.sqlite").path, encryptor: AESGCMEncryptor(keyAlias: "push", keyStore: keys))
        let report = try await AuthMigration.move(from: legacy, oath: oath, push: push, sourceName: "sqlite:legacy.sqlite")
        #expect(report.oathCredentials == 2 && report.pushCredentials == 1 && report.notifications == 2 && report.pushDeviceToken)
        #expect(legacy.getAllAccounts().map(\.issuer) == ["Steam"])
        let client = try await OathClient.createClient { $0.storage = oath }
        #expect(try await client.generateCode("hotp-1") == "162583")
        #expect(try await push.getNotificationByMessageId(messageId: "m1")?.challenge == "Y2hhbGxlbmdlLTE=")
        #expect(try await push.getCurrentPushDeviceToken()?.token == "device-token-1")
        #expect(try await AuthMigration.move(from: legacy, oath: oath, push: push, sourceName: "sqlite:legacy.sqlite").oathCredentials == 0)
        #expect(try await oath.getAllOathCredentials().count == 2)
    }
}

@Suite("AuthMigration between keyring storages", .enabled(
    if: TestKeyring.isRunning, TestKeyring.skipReason))
struct KeyringAuthMigrationTests {
    @Test("the legacy KeychainStorageClient into OathKeychainStorage and PushKeychainStorage: moved, once, the legacy items gone")
    func keychain() async throws {
        let prefix = "org.coffer.tests.migration.\(UUID().uuidString.prefix(8))"
        let legacy = KeychainStorageClient(encryptor: try SecuredKeyEncryptor.make(keyAlias: prefix), servicePrefix: prefix, timeout: .seconds(60))
        AuthMigrationTests.legacyStore(legacy)
        let oath = OathKeychainStorage(service: prefix + ".oath", timeout: .seconds(60))
        let push = PushKeychainStorage(credentialService: prefix + ".push.credentials", notificationService: prefix + ".push.notifications",
                                       tokenService: prefix + ".push.tokens", timeout: .seconds(60))
        let report = try await AuthMigration.move(from: legacy, oath: oath, push: push, sourceName: "keychain")
        #expect(report.oathCredentials == 2 && report.pushCredentials == 1 && report.notifications == 2 && report.pushDeviceToken)
        #expect(legacy.getAllAccounts().map(\.issuer) == ["Steam"] && legacy.getPushDeviceToken() == nil)
        let client = try await OathClient.createClient { $0.storage = oath }
        #expect(try await client.generateCode("hotp-1") == "162583")
        #expect(try await push.getNotificationByMessageId(messageId: "m1")?.challenge == "Y2hhbGxlbmdlLTE=")
        #expect(try await AuthMigration.move(from: legacy, oath: oath, push: push, sourceName: "keychain").oathCredentials == 0)
        try await oath.clearOathCredentials()
        try await push.clearPushCredentials()
        try await push.clearPushDeviceTokens()
        _ = legacy.removeMechanism(mechanism: try #require(legacy.getMechanismForUUID(uuid: "steam-1")))
        _ = legacy.removeAccount(account: Account(issuer: "Steam", accountName: "gamer"))
    }

    /// A source's counter memory of its own (as the `SealedCounterLedgerFile` beside a SQLite store is).
    actor SourceLedger: HOTPCounterLedger {
        var counters: [String: UInt64] = [:]
        func rememberedCounters() async throws -> [String: UInt64] { counters }
        func remember(_ more: [String: UInt64]) async throws { counters = counters.raised(by: more) }
    }

    @Test("the counters of secrets the legacy store removed before the move are carried: re-added after it, they go on")
    func carriesLedger() async throws {
        let ledger = SourceLedger()
        let store = MemoryStorageClient()
        let legacy = AuthenticatorClient(storage: store, ledger: ledger)
        let entry = try await legacy.addAccount(uri: "otpauth://hotp/Bank:alice?secret=\(AuthMigrationTests.secret)&issuer=Bank&counter=0")
        let mechanism = try #require(entry.mechanisms.first)
        for _ in 0..<4 { _ = try await legacy.code(for: mechanism) }
        try await legacy.removeAccount(entry.account)
        #expect(try await !ledger.rememberedCounters().isEmpty, "the legacy client remembered the counter")

        let oath = MemoryOathStorage()
        _ = try await AuthMigration.move(from: store, oath: oath, push: MemoryPushStorage(), sourceName: "legacy", sourceLedger: ledger)
        let client = try await OathClient.createClient { $0.storage = oath }
        let back = try await client.addCredentialFromUri("otpauth://hotp/Bank:alice?secret=\(AuthMigrationTests.secret)&issuer=Bank&counter=0")
        #expect(try await client.generateCode(back.id) == "338314", "counter 4, not 0 (755224)")
    }
}
