import CofferAuthenticator
import Foundation
import Logging
import CofferStorage
import CofferStorageTesting
import CofferAuthenticatorTesting
import TestSupport
import Synchronization
import Testing

@Suite("KeychainStorageClient on a real gnome-keyring", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct KeychainStorageClientTests {
    static func prefix() -> String { "org.coffer.tests.client.\(UUID().uuidString.prefix(8))" }

    @Test("conforms, and leaves no item behind")
    func conforms() async throws {
        let encryptor = try SecuredKeyEncryptor.make(keyAlias: "org.coffer.tests.client")
        let prefixes = Mutex<[String]>([])
        try await StorageClientConformance(makeClient: {
            let prefix = Self.prefix()
            prefixes.withLock { $0.append(prefix) }
            // A minute per keyring call: every keyring suite shares one gnome-keyring, and under a
            // full run a listing of 200 accounts can take longer than the default 10 s.
            return KeychainStorageClient(encryptor: encryptor, servicePrefix: prefix, timeout: .seconds(60))
        }).run()
        // Leftovers would stay in the suite's one gnome-keyring, which rewrites its whole file on
        // every change: the conformance kit removes what it stored.
        let used = prefixes.withLock { $0 }
        #expect(used.count >= 7)
        for prefix in used {
            for kind in ["account", "mechanism", "notification", "index"] {  // the listings' item index too
                let left = try await SecretService(timeout: .seconds(60)).search(["service": "\(prefix).\(kind)"], loadSecrets: false)
                #expect(left.isEmpty, "\(left.count) \(kind) items left under \(prefix)")
            }
        }
    }

    @Test("items carry plain attributes and sealed secrets; a secret copied onto another object's item is refused")
    func sealedAndBound() async throws {
        let prefix = Self.prefix()
        let client = try KeychainStorageClient.make(servicePrefix: prefix)
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "alice", issuer: "I", accountName: "alice", type: .totp, secret: "ALICESECRETAAAA"))
        client.setMechanism(mechanism: Mechanism(mechanismUUID: "bob", issuer: "I", accountName: "bob", type: .totp, secret: "BOBSECRETBBBBBB"))
        let keyring = SecretService()
        let items = try await keyring.search(["service": "\(prefix).mechanism"])
        #expect(items.count == 2)
        for item in items {
            #expect(item.secret.map { $0.range(of: Data("SECRET".utf8)) == nil } == true, "secrets are sealed")
            #expect(item.attributes["type"] == "totp")
        }
        let alices = try #require(items.first { $0.attributes["uuid"] == "alice" }?.secret)
        let bobAttributes = try #require(items.first { $0.attributes["uuid"] == "bob" }?.attributes)
        try await keyring.store(alices, attributes: bobAttributes, label: "copied", contentType: "application/octet-stream")
        #expect(client.getMechanismForUUID(uuid: "bob") == nil, "bob's lookup must not return alice's secret")
        #expect(client.unreadableRecordCount == 1)
        #expect(client.getMechanismForUUID(uuid: "alice")?.secret == "ALICESECRETAAAA")
    }

    @Test("the spec's configuration block, on the legacy module's AuthenticatorConfiguration with KeychainStorageClient()")
    func specConfiguration() async throws {
        try await SharedKeyringAccounts.exclusively { try specSnippet() }
    }

    func specSnippet() throws {
        let customLogger = Logger(label: "custom")
        let config = AuthenticatorConfiguration.build { config in
            config.storage = KeychainStorageClient()
            config.enableCredentialCache = false
            config.logger = customLogger
        }
        #expect(config.storage is KeychainStorageClient)
        let client = try config.makeClient()
        let entry = try client.addAccount(uri: "otpauth://totp/Spec:keyring-\(UUID().uuidString.prefix(6))?secret=JBSWY3DPEHPK3PXP")
        #expect(try client.code(for: entry.mechanisms[0]).code.count == 6)
        try client.removeAccount(entry.account)
    }
}

@Suite("KeychainStorageClient without a keyring")
struct KeychainStorageClientUnavailableTests {
    @Test("with no usable keyring every operation fails with the reason; nothing is stored unsealed")
    func unusable() async throws {
        let result = try await CofferProcess.run(
            executable: try CofferProcess.builtExecutable("coffer-stress"), ["keychain-client-probe"],
            removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(result.stdout == "setAccount=false\nlastError=unavailable\n", "\(result.stdout) \(result.stderr)")
    }
}
