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
        // 2^40 work; 2^22·32·16 and 2^20·8 and 2^17·16 are past the 128 MiB memory bound; 2^14·8·64
        // is within it but past the 2^22 bound on N·r·p (CPU); 2^3 is too weak; r = 0 is not scrypt.
        let crafted: [(Int, Int, Int)] = [(40, 8, 1), (22, 32, 16), (20, 8, 1), (17, 16, 1), (14, 8, 64),
                                          (3, 8, 1), (15, 0, 1), (15, 8, 100000)]
        for (logN, r, p) in crafted {
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
        ReliabilityReport.record("R11", "passphrase key files with absurd scrypt parameters", tried: "\(crafted.count) files",
                                 outcome: "\(crafted.count) refused before any work (each < 1 s), passphrase asked 0 times")
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
        let kept = try await Self.keptKey(alias)
        #expect(kept.permissions == "003f0000", "the owning user only, not the possessor: \(kept)")
        #expect(kept.expiry != "perm", "kept with its timeout from the start: \(kept)")
        if SecondUser.available, let identity = SecondUser.identity {
            // The strongest case: the second user's process inherits a session keyring that links
            // ours (as a `su`/`setpriv` from our shell does), so it possesses our keys.
            let other = try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/keyctl"), ["session", "-", "/bin/sh", "-c", """
                keyctl link @u @s
                setpriv --reuid=\(identity.uid) --regid=\(identity.gid) --clear-groups -- sh -c 'keyctl pipe \(kept.id) > /dev/null; echo read-status=$?; keyctl pipe \(kept.id) | od -An -tx1; keyctl search @s user \(kept.name); echo search-status=$?' 2>&1
                """])
            #expect(other.stdout.contains("read-status=1") && other.stdout.contains("search-status=1"), "\(other.stdout) \(other.stderr)")
            #expect(other.stdout.contains("Permission denied"), "\(other.stdout)")
            let material = created.key.withUnsafeBytes { Data($0) }.prefix(4).map { String(format: "%02x", $0) }.joined(separator: " ")
            #expect(!other.stdout.contains(material), "the other user read the key")
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

    /// The line of `/proc/keys` for the key `alias` remembered in our user keyring.
    static func keptKey(_ alias: String) async throws -> (id: String, name: String, permissions: String, expiry: String) {
        let lines = try String(contentsOfFile: "/proc/keys", encoding: .utf8).split(separator: "\n")
        // id flags usage expiry permissions uid gid type description: payload-length
        guard let line = lines.first(where: { $0.contains(" coffer:\(alias):") }) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "no kept key for \(alias)"])
        }
        let fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let name = fields[8].hasSuffix(":") ? String(fields[8].dropLast()) : fields[8]
        return (String(UInt32(fields[0], radix: 16) ?? 0), name, fields[4], fields[3])
    }

    @Test("a key file grown huge (or a device in its place) is refused before it is read, and left as it was")
    func oversizeFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        try await Self.store(keys, "pw").createKey(for: "a")
        let file = try Self.store(keys, "pw").fileURL(for: "a")
        try await KeyStoreTests.checkOversizeRefused(file) { try await Self.store(keys, "pw").primaryKey(for: "a") }
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
