import Foundation
import TestSupport
import CofferStorage
import CofferStorageTesting
import Testing

/// KeychainStorage and friends against the real gnome-keyring of this test run.
@Suite("KeychainStorage on a real gnome-keyring", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct KeychainStorageTests {
    let service = "org.coffer.tests"

    func storage<T>(_ account: String, encryptor: any Encryptor = NoEncryptor(), _ type: T.Type = T.self) -> KeychainStorage<T> {
        KeychainStorage<T>(account: account, service: service, encryptor: encryptor, cacheStrategy: .noCache)
    }

    @Test("conforms without an encryptor, with and without a cache, and leaves no item behind",
          arguments: [CacheStrategy.noCache, .cache])
    func conformsPlain(strategy: CacheStrategy) async throws {
        let service = "org.coffer.tests.conformance.\(UUID().uuidString.prefix(8))"
        try await StorageConformance(makeStorage: {
            KeychainStorage<ConformanceSample>(
                account: TestKeyring.uniqueAccount(), service: service, cacheStrategy: strategy)
        }).run()
        try await expectNothingLeft(under: service)
    }

    @Test("conforms with SecuredKeyEncryptor, and leaves no item behind")
    func conformsSecured() async throws {
        let encryptor = try #require(SecuredKeyEncryptor(keyAlias: "org.coffer.tests.conformance"))
        let service = "org.coffer.tests.conformance.\(UUID().uuidString.prefix(8))"
        try await StorageConformance(makeStorage: {
            KeychainStorage<ConformanceSample>(
                account: TestKeyring.uniqueAccount(), service: service, encryptor: encryptor, cacheStrategy: .noCache)
        }).run()
        try await expectNothingLeft(under: service)
    }

    /// The conformance kit deletes what it saved: its quarter-megabyte sample left in the suite's
    /// one gnome-keyring (which rewrites its whole file on every change) made every later keyring
    /// write of the run slow enough to time out.
    func expectNothingLeft(under service: String) async throws {
        let left = try await SecretService(timeout: .seconds(60)).search(["service": service], loadSecrets: false)
        #expect(left.isEmpty, "\(left.count) items left under \(service)")
    }

    @Test("items are visible to secret-tool with the documented attributes and label")
    func visibleToSecretTool() async throws {
        let account = TestKeyring.uniqueAccount()
        try await storage(account, Dog.self).save(item: Dog(name: "Lucky", type: "Golden Retriever"))

        let search = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/secret-tool"), ["search", "--all", "service", service, "account", account])
        #expect(search.status == 0)
        let listing = search.stdout + search.stderr  // secret-tool prints attributes on stderr
        #expect(listing.contains("label = \(account) (Coffer, \(service))"))
        #expect(listing.contains("attribute.service = \(service)"))
        #expect(listing.contains("attribute.account = \(account)"))

        let lookup = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/secret-tool"), ["lookup", "service", service, "account", account])
        let json = try JSONSerialization.jsonObject(with: Data(lookup.stdout.utf8)) as? [String: String]
        #expect(json == ["name": "Lucky", "type": "Golden Retriever"], "without an encryptor the secret is the JSON")
    }

    @Test("the spec's snippets compile and run: default service, cacheable, SecuredKeyEncryptor() ?? NoEncryptor()")
    func specSnippets() async throws {
        let account = TestKeyring.uniqueAccount()
        let storage = KeychainStorage<Dog>(account: account) // Create the storage
        try? await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever")) // Persist the item
        let storedData = try? await storage.get() // Retrieve the item
        #expect(storedData == Dog(name: "Lucky", type: "Golden Retriever"))
        #expect(storage.service == "org.coffer.keychain")
        let found = try await SecretService().search(["service": "org.coffer.keychain", "account": account])
        #expect(found.count == 1)

        let secured = KeychainStorage<Dog>(
            account: TestKeyring.uniqueAccount(),
            encryptor: SecuredKeyEncryptor() ?? NoEncryptor(),
            cacheable: true
        )
        #expect(secured.encryptor is SecuredKeyEncryptor, "the test keyring is usable, so the secure encryptor is chosen")
        #expect(secured.cacheStrategy == .cache)
        try await secured.save(item: Dog(name: "Rex", type: "Collie"))
        #expect(try await secured.get()?.name == "Rex")
        try await storage.delete()
        try await secured.delete()
    }

    @Test("SecuredKeyEncryptor seals with an envelope whose key lives in the keyring")
    func securedKeyEncryptor() async throws {
        let alias = "org.coffer.tests.\(UUID().uuidString.prefix(8))"
        let encryptor = try SecuredKeyEncryptor.make(keyAlias: alias)
        let sealed = try await encryptor.encrypt(data: Data("secret".utf8))
        #expect(Array(sealed.prefix(4)) == Array("COFR".utf8))
        #expect(try await encryptor.decrypt(data: sealed) == Data("secret".utf8))
        let keyItems = try await SecretService().search(["service": "org.coffer.keys", "alias": alias])
        #expect(keyItems.count == 1)
        #expect(keyItems.first?.label == "Coffer encryption keys: \(alias)")
        #expect(try await encryptor.rotateKey() == 2)
        #expect(try await encryptor.decrypt(data: sealed) == Data("secret".utf8))
        #expect(try AESGCMEncryptor.keyID(of: try await encryptor.encrypt(data: Data())) == 2)
    }

    @Test("two accounts never see each other's data")
    func accountsAreSeparate() async throws {
        let (a, b) = (TestKeyring.uniqueAccount(), TestKeyring.uniqueAccount())
        try await storage(a, String.self).save(item: "for a")
        #expect(try await storage(b, String.self).get() == nil)
        try await storage(b, String.self).save(item: "for b")
        #expect(try await storage(a, String.self).get() == "for a")
        try await storage(b, String.self).delete()
        #expect(try await storage(a, String.self).get() == "for a")
    }

    @Test("a sealed secret copied to another account's item fails with identityMismatch")
    func copiedItemIsRefused() async throws {
        let encryptor = try SecuredKeyEncryptor.make(keyAlias: "org.coffer.tests.binding")
        let (alice, bob) = (TestKeyring.uniqueAccount(), TestKeyring.uniqueAccount())
        try await storage(alice, encryptor: encryptor, String.self).save(item: "alice's secret")
        let stolen = try #require(try await SecretService().search(["service": service, "account": alice]).first?.secret)
        try await SecretService().store(
            stolen, attributes: ["service": service, "account": bob], label: "copied", contentType: "application/octet-stream")
        do {
            _ = try await storage(bob, encryptor: encryptor, String.self).get()
            Issue.record("bob's storage returned alice's secret")
        } catch StorageError.identityMismatch(_, let expected, let found) {
            #expect(expected == "\(service)/\(bob)")
            #expect(found == "\(service)/\(alice)")
        }
    }

    @Test("two items matching one storage are an error, never a silent pick")
    func ambiguousItems() async throws {
        let account = TestKeyring.uniqueAccount()
        let keyring = SecretService()
        try await keyring.store(Data("\"one\"".utf8), attributes: ["service": service, "account": account],
                                label: "one", contentType: "application/json")
        try await keyring.store(Data("\"two\"".utf8), attributes: ["service": service, "account": account, "extra": "x"],
                                label: "two", contentType: "application/json")
        do {
            _ = try await storage(account, String.self).get()
            Issue.record("an ambiguous read returned a value")
        } catch KeychainError.ambiguous(let attributes, let count) {
            #expect(count == 2)
            #expect(attributes == ["service": service, "account": account])
        }
    }

    @Test("count finds exactly the items with all the given attributes")
    func countItems() async throws {
        let account = TestKeyring.uniqueAccount()
        let keyring = SecretService()
        #expect(try await keyring.count(["service": service, "account": account]) == 0)
        for index in 0..<3 {
            try await keyring.store(Data("\(index)".utf8), attributes: ["service": service, "account": account, "n": "\(index)"],
                                    label: "count \(index)", contentType: "text/plain")
        }
        #expect(try await keyring.count(["service": service, "account": account]) == 3)
        #expect(try await keyring.count(["service": service, "account": account, "n": "1"]) == 1)
        try await keyring.clear(["service": service, "account": account])
        #expect(try await keyring.count(["service": service, "account": account]) == 0)
    }

    @Test("a secret that is not valid JSON is reported as corrupted and left in place")
    func corruptedSecret() async throws {
        let account = TestKeyring.uniqueAccount()
        let attributes = ["service": service, "account": account]
        try await SecretService().store(Data("{not json".utf8), attributes: attributes, label: "bad", contentType: "text/plain")
        await #expect(throws: StorageError.self) { try await storage(account, Dog.self).get() }
        #expect(try await SecretService().search(attributes).first?.secret == Data("{not json".utf8))
    }

    @Test("8 tasks × 200 operations at once lose nothing")
    func concurrentTasks() async throws {
        let accounts = (0..<8).map { _ in TestKeyring.uniqueAccount() }
        let shared = KeychainStorage<Int>(account: TestKeyring.uniqueAccount(), service: service, cacheStrategy: .noCache)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (task, account) in accounts.enumerated() {
                group.addTask {
                    let own = self.storage(account, Int.self)
                    for round in 0..<50 {
                        try await own.save(item: round)
                        let seen = try await own.get()
                        guard seen == round else { throw ConformanceFailure(check: "keychain", message: "task \(task) saved \(round), read \(String(describing: seen))") }
                        try await shared.save(item: task * 1000 + round)
                        _ = try await shared.get()
                    }
                }
            }
            try await group.waitForAll()
        }
        for account in accounts { #expect(try await storage(account, Int.self).get() == 49) }
        let last = try #require(try await shared.get())
        #expect(last % 1000 == 49)
    }

    @Test("SecretServiceKeyStore: create, rotate, get by id, delete; concurrent creators agree")
    func secretServiceKeyStore() async throws {
        let store = SecretServiceKeyStore(service: "org.coffer.tests.keys")
        let alias = TestKeyring.uniqueAccount()
        #expect(try await store.primaryKey(for: alias) == nil)
        let created = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<8 { group.addTask { try await store.createKey(for: alias).key.withUnsafeBytes { Data($0) } } }
            return try await group.reduce(into: Set<Data>()) { $0.insert($1) }
        }
        #expect(created.count == 1, "every creator got the same key")
        let first = try #require(try await store.primaryKey(for: alias))
        let second = try await store.rotateKey(for: alias)
        #expect(second.id == 2 && second.key != first.key)
        #expect(try await store.key(for: alias, id: 1)?.key == first.key)
        #expect(try await store.primaryKey(for: alias)?.id == 2)
        try await store.deleteKeys(for: alias)
        #expect(try await store.primaryKey(for: alias) == nil)
        try await store.deleteKeys(for: alias)
    }

    @Test("SecretServiceKeyStore: a damaged key item is reported and not overwritten")
    func damagedKeyItem() async throws {
        let store = SecretServiceKeyStore(service: "org.coffer.tests.keys")
        let alias = TestKeyring.uniqueAccount()
        let attributes = ["service": "org.coffer.tests.keys", "alias": alias]
        try await SecretService().store(Data("garbage".utf8), attributes: attributes, label: "bad", contentType: "text/plain")
        await #expect(throws: KeyStoreError.self) { try await store.createKey(for: alias) }
        await #expect(throws: KeyStoreError.self) { try await store.rotateKey(for: alias) }
        #expect(try await SecretService().search(attributes).first?.secret == Data("garbage".utf8))
    }

    @Test("strongBoxPreferred keeps the file's key in the keyring, not in a key file")
    func strongBoxPreferred() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let logs = LogCapture()
        let name = TestKeyring.uniqueAccount()
        let storage = EncryptedFileStorage<String>(
            fileName: name, directory: directory.url, strongBoxPreferred: true, logger: logs.logger())
        try await storage.save(item: "value")
        #expect(try await storage.get() == "value")
        #expect(storage.encryptor.keyStore is SecretServiceKeyStore)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("keys").path))
        #expect(try await SecretServiceKeyStore().primaryKey(for: name) != nil)
        #expect(logs.all.contains { $0.text.contains("keeping the key in the OS keyring") })
        #expect(try String(contentsOf: directory.appending("keystore"), encoding: .utf8) == "secret-service\n")
    }

    @Test("strongBoxPreferred follows the recorded choice: a directory recorded as 'file' keeps its key file")
    func recordedFileChoiceKept() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try "file\n".write(to: directory.appending("keystore"), atomically: true, encoding: .utf8)
        let storage = EncryptedFileStorage<String>(fileName: "kept", directory: directory.url, strongBoxPreferred: true)
        try await storage.save(item: "value")
        #expect(storage.encryptor.keyStore is FileKeyStore, "the keyring is usable, but the record says file")
        #expect(FileManager.default.fileExists(atPath: directory.appending("keys/kept.key").path))
    }

    @Test("coffer store --backend keychain keeps values in the keyring")
    func cofferKeychainBackend() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = CofferProcess(dataDirectory: directory.url)
        let name = TestKeyring.uniqueAccount()
        #expect(try await coffer.run(["store", "put", "--backend", "keychain", name, "kept in the keyring"]).status == 0)
        #expect(try await coffer.run(["store", "get", "--backend", "keychain", name]).stdout == "kept in the keyring\n")
        #expect(try await coffer.run(["store", "list", "--backend", "keychain"]).stdout.contains(name + "\n"))
        #expect(try await coffer.run(["store", "get", name]).status == 2, "the file backend is separate: nothing there")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("store").path))
        let env = try await coffer.run(["store", "get", name], environment: ["COFFER_STORE_BACKEND": "keychain"])
        #expect(env.stdout == "kept in the keyring\n", "COFFER_STORE_BACKEND selects the backend: \(env.stderr)")
        let accounts = try await coffer.run(["store", "get", name], environment: ["COFFER_BACKEND": "sqlite"])
        #expect(accounts.stdout.isEmpty && accounts.status == 2, "the accounts' variable does not steer the store")
        #expect(try await coffer.run(["store", "delete", "--backend", "keychain", name]).status == 0)
        #expect(try await coffer.run(["store", "get", "--backend", "keychain", name]).status == 2)
    }
}
