import Foundation
import TestSupport
import CofferStorage
import Testing

@Suite("Key stores")
struct KeyStoreTests {
    static func stores(_ directory: TemporaryDirectory) -> [(String, any KeyStore)] {
        [("memory", MemoryKeyStore()), ("file", FileKeyStore(directory: directory.appending("keys")))]
    }

    @Test("create, get, rotate and delete behave the same in every key store")
    func lifecycle() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        for (name, store) in Self.stores(directory) {
            try await Self.checkLifecycle(name, store)
        }
        // The passphrase store, with cheap scrypt parameters (its cost is not what is tested).
        try await Self.checkLifecycle("passphrase", PassphraseKeyStore(
            directory: directory.appending("passphrase-keys"), parameters: ScryptParameters(logN: 10, r: 8, p: 1)) { "pw" })
    }

    /// Grows a wrapped key file to 64 MiB (sparse: the size is what a reader must refuse), then
    /// puts a FIFO in its place (a naive reader would block forever), and checks that `open`
    /// refuses each at once with a ``KeyStoreError`` that says why, leaving what is there as it was.
    static func checkOversizeRefused(_ file: URL, open: () async throws -> Any?) async throws {
        let original = try Data(contentsOf: file)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 64 << 20)
        try handle.close()
        let clock = ContinuousClock()
        var started = clock.now
        do {
            _ = try await open()
            Issue.record("a 64 MiB key file was read")
        } catch let error as KeyStoreError {
            #expect(error.description.contains("67108864 bytes, more than such a file holds"), "\(error)")
        }
        #expect(clock.now - started < .seconds(1))
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int == 64 << 20, "left as it was")
        try FileManager.default.removeItem(at: file)
        #expect(mkfifo(file.path, 0o600) == 0)
        started = clock.now
        await #expect(throws: KeyStoreError.self, "a FIFO in the key file's place") { _ = try await open() }
        #expect(clock.now - started < .seconds(1), "refused, not blocked on")
        try FileManager.default.removeItem(at: file)
        #expect(FileManager.default.createFile(atPath: file.path, contents: original, attributes: [.posixPermissions: 0o600]))
        #expect(try await open() != nil, "the original file opens again")
        ReliabilityReport.record("R11", "\(file.pathExtension) file grown to 64 MiB, then a FIFO in its place", tried: "2 files",
                                 outcome: "both refused before reading (< 1 s each), left as they were")
    }

    /// The behaviour every key store shares (the TPM store's test runs it too).
    static func checkLifecycle(_ name: String, _ store: any KeyStore) async throws {
        #expect(try await store.primaryKey(for: "a") == nil, "\(name)")
        let first = try await store.createKey(for: "a")
        #expect(first.id == 1)
        let again = try await store.createKey(for: "a")
        #expect(again.id == 1 && again.key == first.key, "\(name): createKey must return the existing key")
        let second = try await store.rotateKey(for: "a")
        #expect(second.id == 2 && second.key != first.key)
        #expect(try await store.primaryKey(for: "a")?.id == 2)
        #expect(try await store.key(for: "a", id: 1)?.key == first.key, "\(name): old keys are kept")
        #expect(try await store.key(for: "a", id: 3) == nil)
        #expect(try await store.primaryKey(for: "b") == nil, "\(name): aliases are separate")
        try await store.deleteKeys(for: "a")
        #expect(try await store.primaryKey(for: "a") == nil)
        try await store.deleteKeys(for: "a")  // absent: no error
        if !(store is MemoryKeyStore) {
            // Stores that name files or items after the alias refuse an empty one.
            await #expect(throws: KeyStoreError.self, "\(name): an empty alias") { try await store.createKey(for: "") }
        }
    }

    @Test("file key store: keys survive a new instance, files 0600, directory 0700")
    func filePersistenceAndPermissions() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.appending("deep/keys")
        let created = try await FileKeyStore(directory: folder).createKey(for: "com.example.v1.KEYS")
        let reopened = try await FileKeyStore(directory: folder).primaryKey(for: "com.example.v1.KEYS")
        #expect(reopened?.key == created.key)
        let file = try FileKeyStore(directory: folder).fileURL(for: "com.example.v1.KEYS")
        #expect(file.lastPathComponent == "com.example.v1.KEYS.key")
        #expect(try permissions(of: file) == 0o600)
        #expect(try permissions(of: folder) == 0o700)
        #expect(try permissions(of: directory.appending("deep")) == 0o700)
    }

    @Test("file key store: aliases map to distinct, safe file names")
    func aliasEscaping() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = FileKeyStore(directory: directory.appending("keys"))
        let aliases = ["a/b", "a%2Fb", "..", ".hidden", "a b", "ü", "a:b"]
        var names = Set<String>()
        for alias in aliases {
            let url = try store.fileURL(for: alias)
            #expect(url.deletingLastPathComponent().path == directory.appending("keys").path, "\(alias) stays inside")
            #expect(!url.lastPathComponent.hasPrefix("."))
            names.insert(url.lastPathComponent)
            try await store.createKey(for: alias)
        }
        #expect(names.count == aliases.count)
        for alias in aliases { #expect(try await store.primaryKey(for: alias)?.id == 1) }
        await #expect(throws: KeyStoreError.self) { try await store.createKey(for: "") }
    }

    @Test("file key store: the file names of existing key files are pinned (a changed escape would lose them)")
    func aliasFileNamesPinned() throws {
        let store = FileKeyStore(directory: URL(fileURLWithPath: "/nonexistent/keys"))
        let expected = [
            "com.example.v1.KEYS": "com.example.v1.KEYS.key", "a/b": "a%2Fb.key", "a%2Fb": "a%252Fb.key",
            "..": "%2E..key", ".hidden": "%2Ehidden.key", "a b": "a%20b.key", "ü": "%C3%BC.key", "a:b": "a%3Ab.key",
            "Z_9-x": "Z_9-x.key", "\u{7F}~": "%7F%7E.key",
        ]
        for (alias, name) in expected {
            #expect(try store.fileURL(for: alias).lastPathComponent == name, "\(alias)")
        }
    }

    @Test("file key store: a damaged key file is reported and never overwritten")
    func corruptedKeyFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = FileKeyStore(directory: directory.appending("keys"))
        try await store.createKey(for: "a")
        let file = try store.fileURL(for: "a")
        let damaged = Data("{\"format\":1,\"primary\":1,\"keys\":[{\"id\":1,\"material\":\"AAAA\"}]}".utf8)
        try damaged.write(to: file)
        for attempt in [{ _ = try await store.primaryKey(for: "a") }, { _ = try await store.createKey(for: "a") },
                        { _ = try await store.rotateKey(for: "a") }] {
            do {
                try await attempt()
                Issue.record("a damaged key file was accepted")
            } catch let error as KeyStoreError {
                guard case .corrupted(let alias, _, let reason) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(alias == "a")
                #expect(reason.contains("expected 32"))
            }
        }
        #expect(try Data(contentsOf: file) == damaged, "the key file must be left as it was")
    }

    @Test("file key store: concurrent creators agree on one key")
    func concurrentCreate() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.appending("keys")
        let keys = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    try await FileKeyStore(directory: folder).createKey(for: "shared").key.withUnsafeBytes { Data($0) }
                }
            }
            return try await group.reduce(into: Set<Data>()) { $0.insert($1) }
        }
        #expect(keys.count == 1)
    }
}
