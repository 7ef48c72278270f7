import Foundation
import TestSupport
import CofferStorage
import CofferStorageTesting
import Testing

// The README's Swift examples, verbatim. `readmeMatchesThisFile` fails when they drift apart.

/// Keeps values in one dictionary, each storage under its own key.
actor Shelf {
    private var items: [String: Data] = [:]
    func put(_ data: Data?, at key: String) { items[key] = data }
    func item(at key: String) -> Data? { items[key] }
}

struct ShelfStorage<T: Codable & Sendable>: Storage {
    let shelf: Shelf
    let key: String

    func save(item: T) async throws {
        await shelf.put(try JSONEncoder().encode(item), at: key)
    }

    func get() async throws -> T? {
        guard let data = await shelf.item(at: key) else { return nil }
        return try JSONDecoder().decode(T.self, from: data)
    }

    func delete() async throws {
        await shelf.put(nil, at: key)
    }
}

@Suite("README examples")
struct ReadmeExamplesTests {
    @Test("store a value, encrypted")
    func storeEncrypted() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url

        struct Dog: Codable, Sendable {
            let name: String
            let type: String
        }

        let storage = EncryptedFileStorage<Dog>(fileName: "com.example.safe", keyAlias: "com.example.v1.KEYS", directory: folder)
        try await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever"))
        let storedData = try await storage.get()
        try await storage.delete()

        #expect(storedData?.name == "Lucky")
        #expect(try await storage.get() == nil)
    }

    @Test("the OS keyring", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
    func keyring() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url

        let storage = KeychainStorage<Dog>(account: "myStorageId")
        try await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever"))
        let storedData = try await storage.get()

        let secured = KeychainStorage<Dog>(
            account: "myStorageId",
            encryptor: SecuredKeyEncryptor() ?? NoEncryptor(),
            cacheable: true
        )

        let tokens = KeychainStorage<Token>(
            account: "com.example.tokens",
            service: "com.example.app",
            encryptor: try SecuredKeyEncryptor.make(),
            cacheStrategy: .cacheOnFailure,
            timeout: .seconds(5)
        )

        let session = EncryptedFileStorage<Token>(fileName: "session", directory: folder, strongBoxPreferred: true)

        #expect(storedData?.name == "Lucky")
        #expect(secured.encryptor is SecuredKeyEncryptor)
        try await tokens.save(item: Token(accessToken: "a", expiresIn: 60))
        #expect(try await tokens.get()?.accessToken == "a")
        try await session.save(item: Token(accessToken: "b", expiresIn: 60))
        #expect(session.encryptor.keyStore is SecretServiceKeyStore)
        try await storage.delete()
        try await tokens.delete()
    }

    @Test("cache strategies")
    func cacheStrategies() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url

        let tokens = EncryptedFileStorage<Token>(fileName: "tokens", directory: folder, cacheStrategy: .cacheOnFailure)
        let recent = FileStorage<[String]>(fileName: "recent.json", directory: folder, cacheStrategy: .cache)
        let inMemory = MemoryStorage<Token>(cacheable: true)

        #expect(tokens.cacheStrategy == .cacheOnFailure)
        #expect(recent.cacheStrategy == .cache)
        #expect(inMemory.cacheStrategy == .cache)
    }

    @Test("your own storage")
    func customStorage() async throws {
        let cached = StorageDelegate(delegate: ShelfStorage<Token>(shelf: Shelf(), key: "token"), cacheStrategy: .cache)
        try await StorageConformance(makeStorage: { ShelfStorage<ConformanceSample>(shelf: Shelf(), key: "sample") }).run()

        try await cached.save(item: Token(accessToken: "a", expiresIn: 1))
        #expect(try await cached.get()?.accessToken == "a")
    }

    @Test("encryptors and key rotation")
    func encryptors() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url

        let keys = FileKeyStore(directory: folder.appendingPathComponent("keys"))
        let encryptor = AESGCMEncryptor(keyAlias: "com.example.v1.KEYS", keyStore: keys)
        let sealed = try await encryptor.encrypt(data: Data("secret".utf8))
        try await encryptor.rotateKey()
        let opened = try await encryptor.decrypt(data: sealed)

        #expect(opened == Data("secret".utf8))
        #expect(try await keys.primaryKey(for: "com.example.v1.KEYS")?.id == 2)
    }

    @Test("tokens and cookies")
    func tokensAndCookies() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url

        let tokenStorage = EncryptedFileStorage<Token>(fileName: "com.example.tokens", directory: folder)
        try await tokenStorage.save(item: Token(accessToken: "eyJ…", tokenType: "Bearer", expiresIn: 3600, refreshToken: "…"))
        if let token = try await tokenStorage.get(), token.isExpired(threshold: 60) {
            print("refresh the token now")
        }

        let cookies = CookieStore(
            persist: ["ST", "ST-NO-SS"],
            storage: EncryptedFileStorage<[Cookie]>(fileName: "com.example.cookies", directory: folder))
        try await cookies.merge([Cookie(name: "ST", value: "…", domain: "example.com")])
        let current = try await cookies.cookies()

        #expect(try await tokenStorage.get()?.isExpired(threshold: 60) == false)
        #expect(current.map(\.name) == ["ST"])
    }

    @Test("errors")
    func errors() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let storage = EncryptedFileStorage<String>(fileName: "damaged", directory: temporary.url)
        try await storage.save(item: "value")
        let damaged = Data("COFR not really".utf8)
        try damaged.write(to: storage.fileURL)

        do {
            _ = try await storage.get()
        } catch StorageError.decryptionFailed(let location, _) {
            print("\(location) was changed or sealed with another key; it was left as it was")
        } catch StorageError.identityMismatch(let location, let expected, let found) {
            print("\(location) holds the data of \(found), not \(expected)")
        }

        // The example's first catch took the error (any other error would have failed this test).
        await #expect(throws: StorageError.self) { try await storage.get() }
        #expect(try Data(contentsOf: storage.fileURL) == damaged)
    }

    @Test("every Swift example in the README and the DocC catalogs appears in a test file")
    func readmeMatchesThisFile() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        // Any Swift file under Tests/ that the suite compiles (the Readme*Tests files hold most).
        let tests = root.appendingPathComponent("Tests")
        let sources = try (FileManager.default.subpaths(atPath: tests.path) ?? []).filter { $0.hasSuffix(".swift") }
            .map { normalized(try String(contentsOf: tests.appendingPathComponent($0), encoding: .utf8)) }
        var blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
        #expect(!blocks.isEmpty, "the README shows the library in Swift")
        // The DocC articles' examples too: every one must be code a test compiles.
        let catalogs = root.appendingPathComponent("Sources")
        for path in FileManager.default.subpaths(atPath: catalogs.path) ?? [] where path.contains(".docc/") && path.hasSuffix(".md") {
            let article = try String(contentsOf: catalogs.appendingPathComponent(path), encoding: .utf8)
            blocks += article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
        }
        #expect(blocks.count >= 12, "the README's and the articles' examples")
        for block in blocks {
            let lines = normalized(block)
            let found = sources.contains { source in
                source.count >= lines.count && (0...(source.count - lines.count)).contains { Array(source[$0..<($0 + lines.count)]) == lines }
            }
            #expect(found, "an example no test compiles:\n\(block)")
        }
    }

    @Test("the README links every DocC article, and every link it makes to Sources/ leads to a file")
    func readmeLinksEveryArticle() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let sources = root.appendingPathComponent("Sources")
        let articles = (FileManager.default.subpaths(atPath: sources.path) ?? [])
            .filter { $0.contains(".docc/Articles/") && $0.hasSuffix(".md") }
        #expect(articles.count >= 8)
        for article in articles {
            #expect(readme.contains("](Sources/\(article))"), "the README does not link Sources/\(article)")
        }
        let linked = readme.components(separatedBy: "](Sources/").dropFirst().map { $0.prefix { $0 != ")" && $0 != "#" } }
        for path in linked {
            #expect(FileManager.default.fileExists(atPath: sources.appendingPathComponent(String(path)).path),
                    "the README links Sources/\(path), which does not exist")
        }
    }

    private func normalized(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("import ") }
    }
}

/// A storage of one's own, as the CofferStorageTesting landing page names it.
struct MyStorage<T: Codable & Sendable>: Storage {
    private let shelf = ShelfStorage<T>(shelf: Shelf(), key: "mine")
    func save(item: T) async throws { try await shelf.save(item: item) }
    func get() async throws -> T? { try await shelf.get() }
    func delete() async throws { try await shelf.delete() }
}

/// The DocC landing pages' examples (the drift check above covers the catalogs too).
@Suite("DocC examples")
struct DocCExamplesTests {
    @Test func myStorageConforms() async throws {
        try await StorageConformance(makeStorage: { MyStorage<ConformanceSample>() }).run()
    }
}
