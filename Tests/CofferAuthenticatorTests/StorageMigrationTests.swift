import CofferAuthenticator
import Foundation
import CofferStorage
import TestSupport
import Testing

/// Fault injection: stores mechanisms with a changed counter, so verification must notice.
final class CorruptingStorageClient: ForwardingStorageClient {
    @discardableResult override func setMechanism(mechanism: Mechanism) -> Bool {
        var changed = mechanism
        changed.counter += 1
        return super.setMechanism(mechanism: changed)
    }
}

@Suite("Moving accounts between storage clients")
struct StorageMigrationTests {
    func source() throws -> MemoryStorageClient {
        let storage = MemoryStorageClient()
        let client = AuthenticatorClient(storage: storage)
        try client.addAccount(uri: "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example")
        try client.addAccount(uri: "otpauth://hotp/Bank:bob?secret=GEZDGNBVGY3TQOJQ&counter=3")
        let push = try client.addAccount(uri: "pushauth://push/Push:carol?r=aHR0cHM6Ly9leGFtcGxlLmNvbS9y&a=aHR0cHM6Ly9leGFtcGxlLmNvbS9h&s=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8&c=Y2hhbGxlbmdl&m=reg-1")
        storage.setNotification(notification: PushNotification(messageId: "n1", mechanismUUID: push.mechanisms[0].mechanismUUID, challenge: "Y2g="))
        storage.setPushDeviceToken(PushDeviceToken(tokenId: "device-token-1"))
        return storage
    }

    @Test("everything moves to a SQLite store and the source is emptied")
    func moves() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let from = try source()
        let expected = from.getAllAccounts().flatMap { from.getMechanismsForAccount(account: $0) }
        let to = try SQLiteStorageClient(path: directory.appending("t.sqlite").path, encryptor: AESGCMEncryptor(keyAlias: "k", keyStore: MemoryKeyStore()))
        let report = try StorageMigration.move(from: from, to: to)
        #expect(report == StorageMigration.Report(accounts: 3, mechanisms: 3, notifications: 1, pushDeviceToken: true))
        #expect(from.isEmpty() && from.getPushDeviceToken() == nil)
        #expect(to.getPushDeviceToken()?.tokenId == "device-token-1")
        #expect(Set(to.getAllAccounts().flatMap { to.getMechanismsForAccount(account: $0) }) == Set(expected))
        #expect(to.getAllNotifications().count == 1)
    }

    @Test("a target that already holds an account, or stores something else than it was given, leaves the source as it was")
    func refusals() throws {
        let from = try source()
        let busy = MemoryStorageClient()
        busy.setAccount(account: Account(issuer: "Example", accountName: "alice"))
        #expect(throws: StorageMigration.Failure.self) { try StorageMigration.move(from: from, to: busy) }
        #expect(from.getAllAccounts().count == 3)

        do {
            _ = try StorageMigration.move(from: from, to: CorruptingStorageClient())
            Issue.record("a corrupting target was accepted")
        } catch {
            guard case .verificationFailed = error else { throw error }
        }
        #expect(from.getAllAccounts().count == 3 && from.getAllNotifications().count == 1, "the source is unchanged")

        let otherDevice = MemoryStorageClient()
        otherDevice.setPushDeviceToken(PushDeviceToken(tokenId: "device-token-2"))
        do {
            _ = try StorageMigration.move(from: from, to: otherDevice)
            Issue.record("a target with another push device token was overwritten")
        } catch {
            guard case .targetNotEmpty(let what) = error, what == ["the push device token"] else { throw error }
        }
        #expect(otherDevice.getPushDeviceToken()?.tokenId == "device-token-2" && otherDevice.getAllAccounts().isEmpty)
        #expect(from.getPushDeviceToken()?.tokenId == "device-token-1", "the source keeps its token")

        // A client written to the spec alone keeps no token: moving there would lose it.
        let specOnly = ForwardingStorageClient(keepsPushDeviceToken: false)
        do {
            _ = try StorageMigration.move(from: from, to: specOnly)
            Issue.record("the push device token was dropped")
        } catch {
            guard case .writeFailed(let what) = error, what == "the push device token" else { throw error }
        }
        #expect(from.getAllAccounts().count == 3 && from.getPushDeviceToken() != nil, "the source is unchanged")
    }
}

@Suite("coffer migrate", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct CofferMigrateTests {
    @Test("sqlite to keychain and back keeps the codes")
    func roundTrip() async throws {
        try await SharedKeyringAccounts.exclusively { try await migrateBothWays() }
    }

    func migrateBothWays() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let issuer = "Migrate\(UUID().uuidString.prefix(6))"
        func coffer(_ arguments: [String]) async throws -> CofferProcess.Result {
            try await CofferProcess.run(executable: try CofferProcess.executable, arguments,
                                        environment: ["COFFER_HOME": directory.appending("home").path], removing: ["COFFER_BACKEND"])
        }
        // A secret of this test's own: the keyring's HOTP counter ledger is shared by the whole run.
        let secret = TestSecret.random()
        let codes = try (0..<2).map { try OathGenerator.hotp(secret: Base32.decode(secret), counter: UInt64($0)) }
        #expect(try await coffer(["add", "otpauth://hotp/\(issuer):m?secret=\(secret)&counter=0"]).status == 0)
        let moved = try await coffer(["migrate", "--to", "keychain"])
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stdout.hasPrefix("Moved 1 account(s), 1 mechanism(s)"))
        #expect(moved.stdout.contains("Commands now use keychain"))
        #expect(try await coffer(["list", "--backend", "sqlite"]).stderr.hasPrefix("No accounts yet"))
        let followed = try await coffer(["list"])
        #expect(followed.stdout.hasPrefix("\(issuer): m") && followed.stderr.isEmpty, "plain list follows the accounts: \(followed.stdout)")
        #expect(try await coffer(["code", issuer]).stdout.contains(codes[0]))
        let back = try await coffer(["migrate", "--backend", "keychain", "--to", "sqlite"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try await coffer(["code", issuer]).stdout.contains(codes[1]), "the HOTP counter moved along")
    }
}
