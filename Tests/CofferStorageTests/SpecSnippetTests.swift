import Foundation
import TestSupport
import CofferStorage
import CofferStorageTesting
import Synchronization
import Testing

// The spec's iOS snippets, changed only where Swift 6 requires it: `→` is written `->`, generic
// parameters are `Codable & Sendable` (Storage values cross tasks), and the mutable class is
// marked `@unchecked Sendable` with a lock guarding its state, as strict concurrency demands.

// MARK: "Implementing your own custom storage"

public final class CustomStorage<T: Codable & Sendable>: Storage, @unchecked Sendable {
    // @unchecked Sendable: `data` is only touched while `lock` is held.
    private let lock = NSLock()
    private var data: T?

    public func save(item: T) async throws {
        lock.withLock { data = item }
    }

    public func get() async throws -> T? {
        return lock.withLock { data }
    }

    public func delete() async throws {
        lock.withLock { data = nil }
    }
}

public class CustomStorageDelegate<T: Codable & Sendable>: StorageDelegate<T>, @unchecked Sendable {
    public init(cacheable: Bool = false) {
        super.init(delegate: CustomStorage<T>(), cacheable: cacheable)
    }
}

// MARK: "You can create your own custom encryptor by implementing the Encryptor protocol"

struct MyEncryptor: Encryptor {
    func encrypt(data: Data) async throws -> Data {
        // Implement the encryption logic (here: a reversible toy transformation)
        Data(data.reversed())
    }

    func decrypt(data: Data) async throws -> Data {
        // Implement the decryption logic
        Data(data.reversed())
    }
}

// MARK: Ping's custom-encryptor examples: bare error cases, and `errorMessage`

struct RefusingEncryptor: Encryptor {
    func encrypt(data: Data) async throws -> Data {
        throw EncryptorError.failedToEncrypt
    }

    func decrypt(data: Data) async throws -> Data {
        throw EncryptorError.failedToDecrypt
    }
}

@Suite("The spec's Swift snippets")
struct SpecSnippetTests {
    @Test("custom storage and its StorageDelegate subclass work and conform")
    func customStorage() async throws {
        let storage = CustomStorageDelegate<Dog>(cacheable: true)
        try await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever"))
        #expect(try await storage.get() == Dog(name: "Lucky", type: "Golden Retriever"))
        #expect(storage.cacheStrategy == .cache)
        try await StorageConformance(makeStorage: { CustomStorageDelegate<ConformanceSample>() }).run()
    }

    @Test("a custom encryptor plugs into the same places as the built-in ones")
    func customEncryptor() async throws {
        let encryptor: any Encryptor = MyEncryptor()
        let sealed = try await encryptor.encrypt(data: Data("abc".utf8))
        #expect(sealed == Data("cba".utf8))
        #expect(try await encryptor.decrypt(data: sealed) == Data("abc".utf8))
    }

    @Test("Ping's encryptor style compiles: bare failedToEncrypt/failedToDecrypt, caught either way, with an errorMessage")
    func pingErrorStyle() async throws {
        do {
            _ = try await RefusingEncryptor().decrypt(data: Data("x".utf8))
            Issue.record("decrypt did not throw")
        } catch EncryptorError.failedToDecrypt {
            // Ping's spelling matches.
        }
        // A check that fails when nothing is thrown (it could not before: issue 31).
        await #expect { _ = try await RefusingEncryptor().encrypt(data: Data("x".utf8)) } throws: { error in
            (error as? EncryptorError)?.errorMessage == "Could not encrypt the data (the encryptor gave no reason)"
        }
        // Coffer's own encryptors give a cause, and the bare pattern matches them too.
        let encryptor = AESGCMEncryptor(keyAlias: "k", keyStore: MemoryKeyStore())
        var damaged = try await encryptor.encrypt(data: Data("abc".utf8))
        damaged[damaged.count - 1] ^= 1
        do {
            _ = try await encryptor.decrypt(data: damaged)
            Issue.record("damaged data opened")
        } catch EncryptorError.failedToDecrypt {
            #expect(Bool(true))
        }
        #expect(StorageError.invalidName("a/b", reason: "it contains '/'").errorMessage.contains("a/b"))
        #expect(KeychainError.locked.errorMessage.hasPrefix("The keyring is locked"))
    }

    @Test("the Android snippet's shape: an encrypted file store with fileName and keyAlias")
    func androidShape() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = EncryptedFileStorage<Dog> {
            $0.fileName = "com.example.safe"
            $0.keyAlias = "com.example.v1.KEYS"
            $0.directory = directory.url
        }
        try await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever"))
        let storedData = try await storage.get()
        #expect(storedData?.name == "Lucky")
    }
}
