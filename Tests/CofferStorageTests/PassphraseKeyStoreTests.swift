import CofferStorage
import Foundation
import Synchronization
import TestSupport
import Testing

@Suite("Passphrase key store")
struct PassphraseKeyStoreTests {
    /// Cheap scrypt parameters: the tests are about behaviour, not cost.
    static let cheap = ScryptParameters(logN: 10, r: 8, p: 1)

    static func store(_ directory: URL, _ passphrase: String, remember: Duration? = nil,
                      asked: Asked? = nil) -> PassphraseKeyStore {
        PassphraseKeyStore(directory: directory, parameters: cheap, remember: remember) { @Sendable in
            asked?.count()
            return passphrase
        }
    }

    /// Counts how often the passphrase was asked for.
    final class Asked: Sendable {
        private let times = Mutex(0)
        func count() { times.withLock { $0 += 1 } }
        var value: Int { times.withLock { $0 } }
    }

    @Test("create, rotate, reopen with the passphrase; a wrong one opens and deletes nothing; no key in the file")
    func lifecycle() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        let asked = Asked()
        let store = Self.store(keys, "correct horse", asked: asked)
        let first = try await store.createKey(for: "a")
        let second = try await store.rotateKey(for: "a")
        #expect(try await store.primaryKey(for: "a")?.key == second.key)
        #expect(asked.value == 1, "one derivation per store: \(asked.value)")
        #expect(try await Self.store(keys, "correct horse").key(for: "a", id: 1)?.key == first.key)
        let file = try store.fileURL(for: "a")
        #expect(file.lastPathComponent == "a.passphrase-key")
        #expect(try permissions(of: file) == 0o600 && permissions(of: keys) == 0o700)
        let before = try Data(contentsOf: file)
        for key in [first, second] {
            let material = key.key.withUnsafeBytes { Data($0) }
            #expect(before.range(of: material) == nil && !String(decoding: before, as: UTF8.self).contains(material.base64EncodedString()))
        }
        #expect(!String(decoding: before, as: UTF8.self).contains("correct horse"))
        for attempt in [{ _ = try await Self.store(keys, "wrong").primaryKey(for: "a") },
                        { _ = try await Self.store(keys, "wrong").rotateKey(for: "a") },
                        { _ = try await Self.store(keys, "wrong").createKey(for: "a") }] {
            do {
                try await attempt()
                Issue.record("a wrong passphrase opened the keys")
            } catch let error as WrappedKeyRingError {
                guard case .wrongPassphrase = error else { Issue.record("\(error)"); continue }
                #expect(!error.description.contains("wrong\""))
            }
        }
        #expect(try Data(contentsOf: file) == before, "nothing written or deleted")
    }

    @Test("a file with absurd scrypt parameters is refused before any work, and the passphrase is never asked")
    func absurdParameters() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        try await Self.store(keys, "pw").createKey(for: "a")
        let file = try Self.store(keys, "pw").fileURL(for: "a")
        let original = try JSONSerialization.jsonObject(with: try Data(contentsOf: file)) as! [String: Any]
        for (logN, r, p) in [(40, 8, 1), (22, 32, 16), (20, 8, 1), (3, 8, 1), (15, 0, 1), (15, 8, 100000)] {
            var header = original["header"] as! [String: Any]
            header["scrypt"] = ["logN": logN, "r": r, "p": p]
            var crafted = original
            crafted["header"] = header
            try JSONSerialization.data(withJSONObject: crafted).write(to: file)
            let asked = Asked()
            let clock = ContinuousClock()
            let started = clock.now
            await #expect(throws: KeyStoreError.self, "logN \(logN) r \(r) p \(p)") {
                try await Self.store(keys, "pw", asked: asked).primaryKey(for: "a")
            }
            #expect(asked.value == 0)
            #expect(clock.now - started < .seconds(1))
        }
        await #expect(throws: KeyStoreError.self) {
            try await PassphraseKeyStore(directory: keys, parameters: ScryptParameters(logN: 30, r: 8, p: 1)) { "pw" }.createKey(for: "b")
        }
        ReliabilityReport.record("R11", "passphrase key files with absurd scrypt parameters", tried: "6 files",
                                 outcome: "6 refused before any work (each < 1 s), passphrase asked 0 times")
    }

    @Test("remembered in the kernel keyring: later stores open without the passphrase, another user reads nothing, gone after the timeout or forget")
    func kernelKeyring() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        let alias = "remember-\(UUID().uuidString.prefix(8))"
        let created = try await Self.store(keys, "pw", remember: .seconds(3)).createKey(for: alias)
        let refusing = PassphraseKeyStore(directory: keys, parameters: Self.cheap) { @Sendable () throws -> String in
            throw CancellationError()
        }
        #expect(try await refusing.primaryKey(for: alias)?.key == created.key, "opened from the kernel keyring")
        #expect(try refusing.sealing(for: alias)?.remembered == true)
        if SecondUser.available {
            let other = try await SecondUser.run("keyctl search @u user 'coffer:\(alias):' 2>&1; keyctl list @u 2>&1; echo status=$?")
            #expect(!other.stdout.contains("coffer:\(alias)"), "another user's keyring holds nothing of ours: \(other.stdout)")
        }
        try await Task.sleep(for: .seconds(4))
        #expect(try refusing.sealing(for: alias)?.remembered == false, "expired")
        await #expect(throws: CancellationError.self) { try await PassphraseKeyStore(directory: keys, parameters: Self.cheap) { @Sendable () throws -> String in throw CancellationError() }.primaryKey(for: alias) }
        _ = try await Self.store(keys, "pw").primaryKey(for: alias)
        #expect(try refusing.sealing(for: alias)?.remembered == true, "remembered again after a use")
        ReliabilityReport.record("R11", "key remembered in the kernel keyring (3 s)", tried: "another user's view, the timeout, forget",
                                 outcome: "another user sees nothing; gone after the timeout; forget drops it")
        #expect(try refusing.forget(alias: alias))
        #expect(try refusing.sealing(for: alias)?.remembered == false)
    }

    @Test("4 stores creating the same alias at once agree on one key")
    func concurrentCreators() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        let created = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<4 {
                group.addTask { try await Self.store(keys, "pw").createKey(for: "a").key.withUnsafeBytes { Data($0) } }
            }
            return try await group.reduce(into: Set<Data>()) { $0.insert($1) }
        }
        #expect(created.count == 1)
    }
}
