import CofferMFACommons
import CofferMFAEngine
import CofferOath
import CofferStorage
import CofferStorageTesting
import CofferAuthenticatorTesting
import Foundation
import TestSupport
import Testing

@Suite("OathKeychainStorage on a real gnome-keyring", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct OathKeychainStorageTests {
    static func service() -> String { "org.coffer.tests.oath.\(UUID().uuidString.prefix(8))" }
    static let secret = "JBSWY3DPEHPK3PXP"

    @Test("conforms (a storage per check, each under a service of its own)")
    func conforms() async throws {
        // A minute per keyring call: the suite shares one gnome-keyring with every other test.
        try await OathStorageConformance(makeStorage: { OathKeychainStorage(service: Self.service(), timeout: .seconds(60)) }).run()
    }

    @Test("one sealed item holds every credential: nothing of them in the clear, no item per credential, an empty book removed")
    func layout() async throws {
        let service = Self.service()
        let storage = OathKeychainStorage(service: service)
        for id in ["layout-1", "layout-2"] {
            try await storage.storeOathCredential(OathCredential(id: id, issuer: "ExampleIssuer", accountName: "alice", oathType: .totp, secretKey: Self.secret))
        }
        let keyring = SecretService()
        let items = try await keyring.search(["service": service])
        #expect(items.map { $0.attributes["kind"] } == ["credentials"], "\(items.map(\.attributes))")
        let stored = String(decoding: items.first?.secret ?? Data(), as: UTF8.self)
        #expect(!stored.contains(Self.secret) && !stored.contains("ExampleIssuer") && !stored.contains("alice"), "sealed, metadata too")
        #expect(try await keyring.count(["service": service + ".secrets"]) == 0)
        #expect(try await storage.getAllOathCredentials().map(\.secret) == [Self.secret, Self.secret])
        #expect(try await storage.removeOathCredential(credentialId: "layout-1"))
        #expect(try await !storage.removeOathCredential(credentialId: "layout-1"))
        #expect(try await storage.removeOathCredential(credentialId: "layout-2"))
        #expect(try await keyring.count(["service": service]) == 0, "an empty book is removed")
    }

    @Test("a book moved onto another access group's item is refused as corrupted, and a change does not overwrite it")
    func movedBook() async throws {
        let service = Self.service()
        let teamA = OathKeychainStorage(service: service, securityOptions: .shared(accessGroup: "team-a"))
        let teamB = OathKeychainStorage(service: service, securityOptions: .shared(accessGroup: "team-b"))
        try await teamA.storeOathCredential(OathCredential(id: "a", issuer: "Example", accountName: "a", oathType: .hotp, secretKey: Self.secret))
        try await teamB.storeOathCredential(OathCredential(id: "b", issuer: "Example", accountName: "b", oathType: .hotp, secretKey: Self.secret))
        let keyring = SecretService()
        let bookOfA = try await keyring.search(["service": service, "accessGroup": "team-a"])[0]
        try await keyring.store(bookOfA.secret!, attributes: bookOfA.attributes.merging(["accessGroup": "team-b"]) { $1 },
                                label: "moved", contentType: "application/octet-stream")
        for call in ["list", "retrieve", "store"] {
            do {
                switch call {
                case "list": _ = try await teamB.getAllOathCredentials()
                case "retrieve": _ = try await teamB.retrieveOathCredential(credentialId: "a")
                default: try await teamB.storeOathCredential(OathCredential(id: "c", issuer: "Example", accountName: "c", oathType: .totp, secretKey: Self.secret))
                }
                Issue.record("\(call): a book moved from another access group was accepted")
            } catch let error as OathStorageError {
                guard case .storageCorrupted = error else { Issue.record("\(call): \(error)"); continue }
            }
        }
        #expect(try await keyring.search(["service": service, "accessGroup": "team-b"])[0].secret == bookOfA.secret, "left as it was")
        #expect(try await teamA.getAllOathCredentials().map(\.id) == ["a"])
        try await teamB.clearOathCredentials()
        #expect(try await keyring.count(["service": service, "accessGroup": "team-b"]) == 0, "clear removes what cannot be read")
        try await teamA.clearOathCredentials()
    }

    /// Items in the layout of Ping's `OathKeychainStorage`, as Coffer 0.3 wrote them: the
    /// metadata JSON under `service` and the sealed secret under `service.secrets`.
    static func writeOldLayout(_ service: String, _ credentials: [OathCredential]) async throws {
        let items = SealedKeyringItems(keyAlias: service + ".key", lockName: service, timeout: .seconds(60))
        for credential in credentials {
            let sealed = try await items.seal(credential.secret, boundTo: "oath/\(service)/\(credential.id)/secret")
            try await items.keyring.store(sealed, attributes: ["service": service + ".secrets", "accessGroup": "", "account": credential.id],
                                          label: "old", contentType: "application/octet-stream")
            try await items.keyring.store(try JSONEncoder().encode(credential), attributes: ["service": service, "accessGroup": "", "account": credential.id],
                                          label: "old", contentType: "application/json")
        }
    }

    static func oldLayoutSet() -> [OathCredential] {
        (0..<3).map {
            OathCredential(id: "old-\($0)", issuer: "Example", accountName: "user\($0)", oathType: .hotp, counter: $0,
                           createdAt: Date(timeIntervalSinceReferenceDate: Double(1_000 + $0)), secretKey: Self.secret)
        }
    }

    @Test("credentials kept two items each (Ping's layout, Coffer 0.3) are moved into the book on first use; one that cannot be read is left")
    func movesTheOlderLayout() async throws {
        let service = Self.service()
        try await Self.writeOldLayout(service, Self.oldLayoutSet())
        let keyring = SecretService()
        // Metadata whose secret is gone cannot be moved; a secret no metadata names can be of no credential.
        try await keyring.store(try JSONEncoder().encode(OathCredential(id: "no-secret", issuer: "X", accountName: "x", oathType: .totp, secretKey: "")),
                                attributes: ["service": service, "accessGroup": "", "account": "no-secret"], label: "old", contentType: "application/json")
        let items = SealedKeyringItems(keyAlias: service + ".key", lockName: service, timeout: .seconds(60))
        try await keyring.store(try await items.seal(Self.secret, boundTo: "oath/\(service)/orphan/secret"),
                                attributes: ["service": service + ".secrets", "accessGroup": "", "account": "orphan"],
                                label: "old", contentType: "application/octet-stream")
        // Not sealed as this storage's: perhaps the metadata of a storage named "<service>.secrets". Left.
        try await keyring.store(Data("{}".utf8), attributes: ["service": service + ".secrets", "accessGroup": "", "account": "other"],
                                label: "old", contentType: "application/json")
        let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
        let listed = try await storage.getAllOathCredentials()
        #expect(listed.map(\.id) == ["old-0", "old-1", "old-2"] && listed.map(\.counter) == [0, 1, 2] && listed.allSatisfy { $0.secret == Self.secret })
        let left = try await keyring.search(["service": service], loadSecrets: false)
        #expect(left.filter { $0.attributes["kind"] == nil }.map { $0.attributes["account"] ?? "" } == ["no-secret"], "only the unreadable one stays")
        #expect(left.filter { $0.attributes["kind"] == "credentials" }.count == 1)
        let secretsLeft = try await keyring.search(["service": service + ".secrets"], loadSecrets: false)
        #expect(secretsLeft.map { $0.attributes["account"] } == ["other"], "moved secrets and the orphan are gone, not what is not this storage's")
        try await storage.clearOathCredentials()
        #expect(try await keyring.count(["service": service]) == 0)
        #expect(try await keyring.count(["service": service + ".secrets"]) == 1, "clear leaves what is not this storage's")
        try await keyring.clear(["service": service + ".secrets"])
    }

    @Test("two metadata items for one id (a copy the keyring keeps apart): the credential is moved once, the book reads, both copies go")
    func duplicateOldItems() async throws {
        let service = Self.service()
        let set = Self.oldLayoutSet()
        try await Self.writeOldLayout(service, set)
        let keyring = SecretService()
        // Stored under its own xdg:schema, the copy is a second item; Coffer reads its attributes
        // without xdg:schema, so it is a metadata item of old-0 like the first.
        try await keyring.store(try JSONEncoder().encode(set[0]), attributes: ["service": service, "accessGroup": "", "account": "old-0",
                                                                                "xdg:schema": "org.coffer.tests.copy"],
                                label: "copy", contentType: "application/json")
        try #require(try await keyring.count(["service": service, "account": "old-0"]) == 2)
        let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
        #expect(try await storage.getAllOathCredentials().map(\.id) == set.map(\.id))
        #expect(try await keyring.search(["service": service], loadSecrets: false).map { $0.attributes["kind"] } == ["credentials"])
        try await storage.storeOathCredential(OathCredential(id: "new", issuer: "Example", accountName: "n", oathType: .totp, secretKey: Self.secret))
        #expect(try await storage.getAllOathCredentials().count == 4, "the book is changeable")
        try await storage.clearOathCredentials()
    }

    @Test("two items hold the book (its old item left in another collection): the newest is read, whichever the keyring lists first, and changes go on")
    func twoBookItems() async throws {
        let service = Self.service()
        let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
        try await storage.storeOathCredential(OathCredential(id: "first", issuer: "Example", accountName: "a", oathType: .totp, secretKey: Self.secret))
        let keyring = SecretService()
        let original = try #require(try await keyring.search(["service": service, "kind": "credentials"]).first)
        // A second item with the same sealed book: the one a changed default collection leaves behind.
        try await keyring.store(original.secret!, attributes: original.attributes.merging(["xdg:schema": "org.coffer.tests.copy"]) { $1 },
                                label: "left behind", contentType: "application/octet-stream")
        try #require(try await keyring.count(["service": service, "kind": "credentials"]) == 2)
        for index in 0..<3 {
            try await storage.storeOathCredential(OathCredential(id: "next-\(index)", issuer: "Example", accountName: "b", oathType: .totp, secretKey: Self.secret))
            #expect(try await storage.getAllOathCredentials().count == 2 + index, "after store \(index)")
        }
        #expect(try await storage.removeOathCredential(credentialId: "first"))
        #expect(try await storage.getAllOathCredentials().map(\.id).sorted() == ["next-0", "next-1", "next-2"])
        try await storage.clearOathCredentials()
        #expect(try await keyring.count(["service": service]) == 0)
    }

    @Test("storages S and S.secrets side by side (S's old secrets and S.secrets's metadata have the same attributes): each moves and clears only its own")
    func neighbourServices() async throws {
        let service = Self.service()
        let neighbour = service + ".secrets"
        try await Self.writeOldLayout(service, Self.oldLayoutSet())
        let theirs = ["x", "y"].map { OathCredential(id: $0, issuer: "Neighbour", accountName: $0, oathType: .totp, secretKey: "GEZDGNBVGY3TQOJQ") }
        try await Self.writeOldLayout(neighbour, theirs)
        let mine = OathKeychainStorage(service: service, timeout: .seconds(60))
        let next = OathKeychainStorage(service: neighbour, timeout: .seconds(60))
        #expect(try await mine.getAllOathCredentials().map(\.id) == Self.oldLayoutSet().map(\.id))
        #expect(try await next.getAllOathCredentials().map(\.id) == ["x", "y"], "S's move left S.secrets's metadata alone")
        try await mine.clearOathCredentials()
        #expect(try await next.getAllOathCredentials().map(\.secret) == ["GEZDGNBVGY3TQOJQ", "GEZDGNBVGY3TQOJQ"], "S's clear left S.secrets's book")
        try await next.clearOathCredentials()
        #expect(try await SecretService().count(["service": service]) == 0)
    }

    @Test("ids told apart byte for byte, as the keyring does: a composed and a decomposed \"café\" are two credentials, each with its own secret")
    func idsByBytes() async throws {
        let service = Self.service()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        try #require(composed == decomposed, "Swift takes them for one string")
        try await Self.writeOldLayout(service, [
            OathCredential(id: composed, issuer: "A", accountName: "a", oathType: .totp, createdAt: Date(timeIntervalSinceReferenceDate: 1), secretKey: Self.secret),
            OathCredential(id: decomposed, issuer: "B", accountName: "b", oathType: .totp, createdAt: Date(timeIntervalSinceReferenceDate: 2), secretKey: "GEZDGNBVGY3TQOJQ"),
        ])
        let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
        let listed = try await storage.getAllOathCredentials()
        #expect(listed.map { Array($0.id.utf8) } == [Array(composed.utf8), Array(decomposed.utf8)])
        #expect(listed.map(\.secret) == [Self.secret, "GEZDGNBVGY3TQOJQ"])
        #expect(try await storage.retrieveOathCredential(credentialId: decomposed)?.issuer == "B")
        #expect(try await storage.removeOathCredential(credentialId: composed))
        #expect(try await storage.getAllOathCredentials().map(\.issuer) == ["B"])
        try await storage.clearOathCredentials()
    }

    @Test("an old secret sealed under a key the key store does not hold is left, logged; the others move and the storage works")
    func oldSecretUnderAnUnknownKey() async throws {
        let service = Self.service()
        try await Self.writeOldLayout(service, Self.oldLayoutSet())
        let items = SealedKeyringItems(keyAlias: service + ".key", lockName: service, timeout: .seconds(60))
        var sealed = try await items.seal(Self.secret, boundTo: "oath/\(service)/stale/secret")
        sealed.replaceSubrange(5..<9, with: [0, 0, 0, 7])  // the envelope's key id
        try await items.keyring.store(sealed, attributes: ["service": service + ".secrets", "accessGroup": "", "account": "stale"],
                                      label: "old", contentType: "application/octet-stream")
        try await items.keyring.store(try JSONEncoder().encode(OathCredential(id: "stale", issuer: "X", accountName: "x", oathType: .totp, secretKey: "")),
                                      attributes: ["service": service, "accessGroup": "", "account": "stale"], label: "old", contentType: "application/json")
        let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
        #expect(try await storage.getAllOathCredentials().map(\.id) == Self.oldLayoutSet().map(\.id))
        try await storage.storeOathCredential(OathCredential(id: "new", issuer: "Example", accountName: "n", oathType: .totp, secretKey: Self.secret))
        #expect(try await items.keyring.count(["service": service, "account": "stale"]) == 1, "left where it was")
        #expect(try await items.keyring.count(["service": service + ".secrets", "account": "stale"]) == 1)
        try await storage.clearOathCredentials()
        #expect(try await items.keyring.count(["service": service]) == 0)
        #expect(try await items.keyring.count(["service": service + ".secrets"]) == 0)
    }

    @Test("a process killed before each keyring write of the move (7 of them) loses nothing and leaves no copy behind")
    func killedDuringTheMove() async throws {
        let stress = try CofferProcess.builtExecutable("coffer-stress")
        let expected = Self.oldLayoutSet().map(\.id)
        for killAt in 1...8 {
            let service = Self.service()
            try await Self.writeOldLayout(service, Self.oldLayoutSet())
            let run = try await CofferProcess.run(executable: stress, ["oath-keychain-read", service, String(killAt)])
            if killAt <= 7 {
                #expect(run.status == 128 + SIGKILL, "killed at write \(killAt): \(run.status) \(run.stderr)")
            } else {
                #expect(run.status == 0 && run.stdout == "3\n", "the move makes 7 writes; \(run.stdout) \(run.stderr)")
            }
            let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
            #expect(try await storage.getAllOathCredentials().map(\.id) == expected, "after a kill at write \(killAt)")
            let keyring = SecretService()
            let items = try await keyring.search(["service": service], loadSecrets: false)
            #expect(items.map { $0.attributes["kind"] } == ["credentials"], "one book and nothing old, after a kill at write \(killAt)")
            #expect(try await keyring.count(["service": service + ".secrets"]) == 0, "after a kill at write \(killAt)")
            try await storage.clearOathCredentials()
        }
    }

    @Test("4 processes × 10 credentials into one book at once, from Ping's layout: the move made once, all 43 kept (the keyring lock)")
    func fourProcessesStoring() async throws {
        let service = Self.service()
        try await Self.writeOldLayout(service, Self.oldLayoutSet())
        let run = try await CofferProcess.stressAtOnce(["oath-keychain-store", service, "10"])
        #expect(run.allSucceeded, "\(run.failures)")
        let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
        let ids = try await storage.getAllOathCredentials().map(\.id)
        #expect(ids.count == 43 && Set(ids).count == 43, "\(ids.count) listed")
        #expect(Set(ids).isSuperset(of: Self.oldLayoutSet().map(\.id)))
        let keyring = SecretService()
        #expect(try await keyring.search(["service": service], loadSecrets: false).map { $0.attributes["kind"] } == ["credentials"])
        try await storage.clearOathCredentials()
    }

    @Test("a book that cannot be opened: listings fail rather than read as empty, a store fails rather than replace it, clear removes it")
    func damagedBook() async throws {
        let service = Self.service()
        let storage = OathKeychainStorage(service: service)
        try await storage.storeOathCredential(OathCredential(id: "kept", issuer: "Example", accountName: "a", oathType: .totp, secretKey: Self.secret))
        let keyring = SecretService()
        let damaged = Data("not sealed".utf8)
        try await keyring.store(damaged, attributes: ["service": service, "accessGroup": "", "kind": "credentials"], label: "damaged",
                                contentType: "text/plain")
        await #expect(throws: OathStorageError.self) { try await storage.getAllOathCredentials() }
        await #expect(throws: OathStorageError.self) { try await storage.retrieveOathCredential(credentialId: "kept") }
        await #expect(throws: OathStorageError.self) {
            try await storage.storeOathCredential(OathCredential(id: "new", issuer: "Example", accountName: "b", oathType: .totp, secretKey: Self.secret))
        }
        await #expect(throws: OathStorageError.self) { try await storage.removeOathCredential(credentialId: "kept") }
        #expect(try await keyring.search(["service": service]).map(\.secret) == [damaged], "nothing was replaced")
        try await storage.clearOathCredentials()
        #expect(try await keyring.count(["service": service]) == 0)
        #expect(try await storage.getAllOathCredentials().isEmpty)
    }

    @Test("biometric presets are refused on every call, not silently downgraded; access groups see only their own items")
    func securityOptions() async throws {
        let service = Self.service()
        let biometric = OathKeychainStorage(service: service, securityOptions: .biometric)
        do {
            try await biometric.storeOathCredential(OathCredential(issuer: "E", accountName: "a", oathType: .totp, secretKey: Self.secret))
            Issue.record("a biometric preset stored a credential")
        } catch let error as OathStorageError {
            guard case .accessDenied = error else { Issue.record("\(error)"); return }
        }
        let teamA = OathKeychainStorage(service: service, securityOptions: .shared(accessGroup: "team-a"))
        let teamB = OathKeychainStorage(service: service, accessGroup: "team-b")
        try await teamA.storeOathCredential(OathCredential(id: "shared", issuer: "E", accountName: "a", oathType: .totp, secretKey: Self.secret))
        #expect(try await teamB.getAllOathCredentials().isEmpty)
        #expect(try await teamB.retrieveOathCredential(credentialId: "shared") == nil)
        #expect(try await teamA.getAllOathCredentials().count == 1)
        #expect(try await OathKeychainStorage(service: service).getAllOathCredentials().isEmpty, "no group sees no group's items")
        try await teamA.clearOathCredentials()
    }

    @Test("4 processes × 50 HOTP codes of one credential on the keyring: 200 distinct counters, the counter 200 on")
    func fourProcesses() async throws {
        let service = Self.service()
        let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
        let client = try await OathClient.createClient { $0.storage = storage }
        let credential = try await client.addCredentialFromUri("otpauth://hotp/Race:alice?secret=\(OathClientTests.rfcSecret)")
        let run = try await CofferProcess.stressAtOnce(["oath-hotp-keychain", service, credential.id, "50"])
        #expect(run.allSucceeded, "\(run.failures)")
        #expect(run.numbers.count == 200 && Set(run.numbers).count == 200, "\(Set(run.numbers).count) distinct of \(run.numbers.count)")
        #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.counter == 200)
        try await storage.clearOathCredentials()
    }

    @Test("the client on the keyring: RFC 4226 codes, the counter stored first, 4 tasks × 25 codes distinct")
    func client() async throws {
        let storage = OathKeychainStorage(service: Self.service(), timeout: .seconds(60))
        let client = try await OathClient.createClient { $0.storage = storage }
        let credential = try await client.addCredentialFromUri("otpauth://hotp/RFC:4226?secret=\(OathClientTests.rfcSecret)")
        #expect(try await client.generateCode(credential.id) == "755224")
        #expect(try await client.generateCode(credential.id) == "287082")
        #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.counter == 2)
        let counters = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<4 {
                group.addTask { var used: [Int] = []; for _ in 0..<25 { used.append(try await client.generateCodeWithValidity(credential.id).counter) }; return used }
            }
            return try await group.reduce(into: [Int]()) { $0 += $1 }
        }
        #expect(Set(counters).count == 100)
        #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.counter == 102)
        try await storage.clearOathCredentials()
    }

    @Test("the counter memory: removed and re-added through another storage object, the fourth code comes next; the record is sealed")
    func counterMemory() async throws {
        let service = Self.service()
        let code = try await OathCounterMemoryTests.removeAndReadd(first: OathKeychainStorage(service: service, timeout: .seconds(60)),
                                                                   reopened: OathKeychainStorage(service: service, timeout: .seconds(60)))
        #expect(code == OathCounterMemoryTests.codes[3])
        let items = try await SecretService().search(["service": service + ".counters"])
        #expect(items.count == 1)
        #expect(items.first?.secret.map { (try? JSONDecoder().decode([String: UInt64].self, from: $0)) == nil } == true, "sealed, not the map")
        let storage = OathKeychainStorage(service: service, timeout: .seconds(60))
        try await storage.clearOathCredentials()
        try await SecretService().clear(["service": service + ".counters"])
        #expect(try await storage.rememberedCounters().isEmpty)
    }
}
