import Foundation
import TestSupport
import CofferStorage
import Testing

struct Dog: Codable, Sendable, Equatable {
    let name: String
    let type: String
}

@Suite("File backends")
struct FileStorageTests {
    // MARK: Plain files

    @Test("FileStorage writes plain JSON, 0600 in a 0700 directory it creates")
    func plainFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.appending("new/folder")
        let storage = FileStorage<Dog>(fileName: "dog.json", directory: folder)
        try await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever"))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: storage.fileURL)) as? [String: String]
        #expect(json == ["name": "Lucky", "type": "Golden Retriever"])
        #expect(try permissions(of: storage.fileURL) == 0o600)
        #expect(try permissions(of: folder) == 0o700)
        #expect(try await FileStorage<Dog>(fileName: "dog.json", directory: folder).get()?.name == "Lucky")
    }

    @Test("FileStorage: unreadable JSON is reported as corrupted and left alone")
    func plainCorrupted() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = FileStorage<Dog>(fileName: "dog.json", directory: directory.url)
        let garbage = Data("{\"name\": \"secret-ish\", \"ty".utf8)
        try garbage.write(to: storage.fileURL)
        do {
            _ = try await storage.get()
            Issue.record("corrupted JSON was accepted")
        } catch let error as StorageError {
            guard case .corrupted(let location, _) = error else { throw error }
            #expect(location == storage.fileURL.path)
            #expect(!error.localizedDescription.contains("secret-ish"), "messages never quote stored data")
        }
        #expect(try Data(contentsOf: storage.fileURL) == garbage)
    }

    @Test("names that would escape the directory or clash with lock files are refused")
    func invalidNames() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        for name in ["", "../escape", "a/b", ".hidden", String(repeating: "x", count: 201)] {
            let storage = EncryptedFileStorage<String>(fileName: name, directory: directory.url)
            await #expect(throws: StorageError.self, "\(name.prefix(12))") { try await storage.save(item: "x") }
            await #expect(throws: StorageError.self) { try await storage.get() }
        }
        #expect(!FileManager.default.fileExists(atPath: directory.url.deletingLastPathComponent().appendingPathComponent("escape").path))
    }

    @Test("the default directory follows XDG_DATA_HOME, else ~/.local/share")
    func defaultDirectory() {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            #expect(DataDirectory.default.path == URL(fileURLWithPath: xdg).appendingPathComponent("coffer").path)
        } else {
            #expect(DataDirectory.default.path.hasSuffix("/.local/share/coffer"))
        }
        #expect(FileStorage<String>(fileName: "x").fileURL.deletingLastPathComponent().path == DataDirectory.default.path)
    }

    // MARK: Encrypted files

    func encrypted(_ name: String, in directory: TemporaryDirectory, keys: (any KeyStore)? = nil) -> EncryptedFileStorage<Dog> {
        EncryptedFileStorage<Dog>(fileName: name, directory: directory.url, keyStore: keys)
    }

    @Test("EncryptedFileStorage seals the file, keeps its key beside it, and reopens")
    func encryptedRoundTrip() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = encrypted("dog", in: directory)
        try await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever"))
        let bytes = try Data(contentsOf: storage.fileURL)
        #expect(Array(bytes.prefix(4)) == Array("COFR".utf8))
        #expect(bytes.range(of: Data("Lucky".utf8)) == nil)
        #expect(try permissions(of: storage.fileURL) == 0o600)
        #expect(try permissions(of: directory.appending("keys/dog.key")) == 0o600)
        #expect(try permissions(of: directory.appending("keys")) == 0o700)
        #expect(try await encrypted("dog", in: directory).get() == Dog(name: "Lucky", type: "Golden Retriever"))
    }

    @Test("keyAlias defaults to the file name and can be shared")
    func keyAlias() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = MemoryKeyStore()
        try await EncryptedFileStorage<Dog>(fileName: "a", directory: directory.url, keyStore: keys)
            .save(item: Dog(name: "A", type: "a"))
        #expect(try await keys.primaryKey(for: "a") != nil)
        let shared = EncryptedFileStorage<Dog>(
            fileName: "b", keyAlias: "com.example.v1.KEYS", directory: directory.url, keyStore: keys)
        try await shared.save(item: Dog(name: "B", type: "b"))
        #expect(try await keys.primaryKey(for: "com.example.v1.KEYS") != nil)
        #expect(try await keys.primaryKey(for: "b") == nil)
    }

    @Test("the configuration-block initializer sets the same properties")
    func configurationBlock() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = EncryptedFileStorage<String> { config in
            config.fileName = "com.example.safe"
            config.keyAlias = "com.example.v1.KEYS"
            config.directory = directory.url
            config.cacheStrategy = .cacheOnFailure
        }
        try await storage.save(item: "value")
        #expect(storage.fileURL.lastPathComponent == "com.example.safe")
        #expect(storage.encryptor.keyAlias == "com.example.v1.KEYS")
        #expect(storage.cacheStrategy == .cacheOnFailure)
        #expect(FileManager.default.fileExists(atPath: directory.appending("keys/com.example.v1.KEYS.key").path))
    }

    @Test("every flipped byte, truncation and extension is a typed error and leaves the file as it was")
    func tamperDetection() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = encrypted("dog", in: directory)
        try await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever"))
        let original = try Data(contentsOf: storage.fileURL)

        var variants: [(String, Data)] = original.indices.map { index in
            var damaged = original
            damaged[index] ^= 0x80
            return ("flip byte \(index)", damaged)
        }
        variants += [1, 16, original.count - 1].map { ("truncate to \($0)", original.prefix($0)) }
        variants += [("extend", original + Data([0])), ("empty", Data())]

        for (label, damaged) in variants {
            try damaged.write(to: storage.fileURL)
            do {
                _ = try await storage.get()
                Issue.record("\(label): damaged file was accepted")
            } catch let error as StorageError {
                switch error {
                case .decryptionFailed, .corrupted: break
                default: Issue.record("\(label): unexpected \(error)")
                }
            }
            #expect(try Data(contentsOf: storage.fileURL) == damaged, "\(label): file must be left unchanged")
        }
    }

    @Test("a file copied over another store's file is refused, not returned")
    func swappedFiles() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = MemoryKeyStore()
        let alice = EncryptedFileStorage<Dog>(fileName: "alice", keyAlias: "shared", directory: directory.url, keyStore: keys)
        let bob = EncryptedFileStorage<Dog>(fileName: "bob", keyAlias: "shared", directory: directory.url, keyStore: keys)
        try await alice.save(item: Dog(name: "Alice's", type: "a"))
        try await bob.save(item: Dog(name: "Bob's", type: "b"))
        let bobsFile = try Data(contentsOf: bob.fileURL)
        try Data(contentsOf: alice.fileURL).write(to: bob.fileURL)
        do {
            _ = try await bob.get()
            Issue.record("bob's storage returned alice's data")
        } catch StorageError.identityMismatch(let location, let expected, let found) {
            #expect(location == bob.fileURL.path)
            #expect(expected == "bob" && found == "alice")
        }
        #expect(try Data(contentsOf: bob.fileURL) != bobsFile)  // the copy stays for a person to inspect
    }

    @Test("a file sealed with another key store's key fails to decrypt")
    func wrongKey() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await encrypted("dog", in: directory, keys: MemoryKeyStore()).save(item: Dog(name: "L", type: "x"))
        let other = MemoryKeyStore()
        try await other.createKey(for: "dog")
        do {
            _ = try await encrypted("dog", in: directory, keys: other).get()
            Issue.record("opened with the wrong key")
        } catch StorageError.decryptionFailed(let location, _) {
            #expect(location.hasSuffix("/dog"))
        }
    }

    @Test("rotation: old data still opens, the next save re-seals under the new key id")
    func rotationReseals() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = encrypted("dog", in: directory)
        try await storage.save(item: Dog(name: "Old", type: "x"))
        #expect(try AESGCMEncryptor.keyID(of: Data(contentsOf: storage.fileURL)) == 1)
        #expect(try await storage.rotateKey() == 2)
        #expect(try await storage.get()?.name == "Old")
        #expect(try AESGCMEncryptor.keyID(of: Data(contentsOf: storage.fileURL)) == 1, "reading does not write")
        try await storage.save(item: Dog(name: "New", type: "x"))
        #expect(try AESGCMEncryptor.keyID(of: Data(contentsOf: storage.fileURL)) == 2)
        #expect(try await encrypted("dog", in: directory).get()?.name == "New")
    }

    @Test("delete removes the file and leaves no temporary files behind")
    func deleteAndNoLeftovers() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = encrypted("dog", in: directory)
        for index in 0..<5 { try await storage.save(item: Dog(name: "\(index)", type: "x")) }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!names.contains { $0.hasSuffix(".tmp") })
        try await storage.delete()
        #expect(!FileManager.default.fileExists(atPath: storage.fileURL.path))
        try await storage.delete()
        #expect(try await storage.get() == nil)
    }
}
