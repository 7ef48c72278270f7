@testable import CofferStorage
import Foundation
import Synchronization
import TestSupport
import Testing

/// The two gaps in the missing-key guard an attack review found on 2026-11-28
/// (docs/threat-model.md): the check and the key's creation were two steps, and a file storage
/// looked only at its own file.
@Suite("A key file that goes missing: never a second key, for this file or a sibling")
struct MissingKeyAttackTests {
    struct Secret: Codable, Sendable, Equatable { var value: String }

    /// A ``FileKeyStore`` whose key file someone else moves away or back (at random) before
    /// every lookup: any interleaving of a key file moved about during one save. A key file in
    /// its place while the moved one is away is a second key, counted.
    final class TogglingKeyStore: KeyStore {
        let inner: FileKeyStore
        let keyFile: String
        let aside: String
        let secondKeys = Mutex(0)

        init(inner: FileKeyStore, keyFile: String, aside: String) {
            self.inner = inner
            self.keyFile = keyFile
            self.aside = aside
        }

        func sawSecondKey() -> Bool { access(keyFile, F_OK) == 0 && access(aside, F_OK) == 0 }

        private func toggle() {
            if sawSecondKey() { secondKeys.withLock { $0 += 1 } }
            if Bool.random() { rename(keyFile, aside) } else { rename(aside, keyFile) }
        }

        func primaryKey(for alias: String) async throws -> VersionedKey? {
            toggle()
            return try await inner.primaryKey(for: alias)
        }
        func key(for alias: String, id: UInt32) async throws -> VersionedKey? {
            toggle()
            return try await inner.key(for: alias, id: id)
        }
        func createKey(for alias: String) async throws -> VersionedKey {
            toggle()
            return try await inner.createKey(for: alias)
        }
        func rotateKey(for alias: String) async throws -> VersionedKey { try await inner.rotateKey(for: alias) }
        func deleteKeys(for alias: String) async throws { try await inner.deleteKeys(for: alias) }
    }

    @Test("a key file moved away and back at every lookup during saves: the value sealed under the one key, or refused")
    func movedAboutDuringOneSave() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        try await EncryptedFileStorage<Secret>(fileName: "tokens", keyAlias: "k", directory: directory.url,
                                               keyStore: FileKeyStore(directory: keys)).save(item: Secret(value: "first"))
        let keyFile = keys.appendingPathComponent("k.key").path
        let original = try Data(contentsOf: URL(fileURLWithPath: keyFile))
        let toggling = TogglingKeyStore(inner: FileKeyStore(directory: keys), keyFile: keyFile, aside: directory.appending("k.aside").path)
        let storage = EncryptedFileStorage<Secret>(fileName: "tokens", keyAlias: "k", directory: directory.url, keyStore: toggling)
        var saved = 0
        var refused = 0
        for round in 0..<200 {
            do {
                try await storage.save(item: Secret(value: "round \(round)"))
                saved += 1
            } catch StorageError.keyMissing(_, "k", 1) {
                refused += 1
            }
            #expect(!toggling.sawSecondKey(), "round \(round): a second key")
        }
        #expect(toggling.secondKeys.withLock { $0 } == 0)
        let now = FileManager.default.fileExists(atPath: keyFile) ? keyFile : directory.appending("k.aside").path
        #expect(try Data(contentsOf: URL(fileURLWithPath: now)) == original, "the key ring is the original one")
        #expect(saved > 0 && refused > 0, "both interleavings were reached: \(saved) saved, \(refused) refused")
        if !FileManager.default.fileExists(atPath: keyFile) { rename(directory.appending("k.aside").path, keyFile) }
        let value = try await EncryptedFileStorage<Secret>(fileName: "tokens", keyAlias: "k", directory: directory.url,
                                                           keyStore: FileKeyStore(directory: keys)).get()
        #expect(value?.value.hasPrefix("round ") == true, "the last saved value opens with the original key")
    }

    @Test("a thread moving the key file to and fro during 1,000 saves: never a second key")
    func movedAboutByAnotherThread() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        let storage = EncryptedFileStorage<Secret>(fileName: "tokens", keyAlias: "k", directory: directory.url,
                                                   keyStore: FileKeyStore(directory: keys))
        try await storage.save(item: Secret(value: "first"))
        let keyPath = keys.appendingPathComponent("k.key").path
        let awayPath = directory.appending("k.away").path
        final class Mover: Sendable {
            let stop = Atomic(false)
            let secondKeys = Atomic(0)
        }
        let shared = Mover()
        let mover = Thread {
            while !shared.stop.load(ordering: .relaxed) {
                rename(keyPath, awayPath)
                usleep(UInt32.random(in: 0...200))
                // A key file where the moved one was is a second key: counted, and taken away.
                if access(keyPath, F_OK) == 0 {
                    shared.secondKeys.add(1, ordering: .relaxed)
                    unlink(keyPath)
                }
                rename(awayPath, keyPath)
                usleep(UInt32.random(in: 0...200))
            }
        }
        mover.start()
        var refused = 0
        for round in 0..<1_000 {
            do {
                try await storage.save(item: Secret(value: "v\(round)"))
            } catch StorageError.keyMissing {
                refused += 1
            }
        }
        shared.stop.store(true, ordering: .relaxed)
        while access(keyPath, F_OK) != 0 { usleep(1_000) }
        #expect(shared.secondKeys.load(ordering: .relaxed) == 0)
        #expect(refused > 0, "the key file was away during some saves")
        #expect(try await storage.get()?.value.hasPrefix("v") == true)
    }

    @Test("a sibling sharing the key alias, with no value of its own, makes no key while the key file is away")
    func siblingWithoutValue() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        func storage(_ name: String) -> EncryptedFileStorage<Secret> {
            EncryptedFileStorage(fileName: name, keyAlias: "k", directory: directory.url, keyStore: FileKeyStore(directory: keys))
        }
        try await storage("tokens").save(item: Secret(value: "the only copy"))
        let sealed = try Data(contentsOf: directory.appending("tokens"))
        try FileManager.default.moveItem(at: keys.appendingPathComponent("k.key"), to: directory.appending("k.away"))

        for attempt in ["save", "rotate"] {
            await #expect(Comment(rawValue: attempt)) {
                if attempt == "save" { try await storage("cookies").save(item: Secret(value: "new")) } else { try await storage("cookies").rotateKey() }
            } throws: { error in
                guard case .keyMissing(let location, "k", 1)? = error as? StorageError else { return false }
                return location == directory.appending("tokens").path
                    && (error as? LocalizedError)?.errorDescription?.contains("no new key was made") == true
            }
        }
        #expect(!FileManager.default.fileExists(atPath: keys.appendingPathComponent("k.key").path), "no second key")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("cookies").path), "nothing written")
        #expect(try Data(contentsOf: directory.appending("tokens")) == sealed)

        try FileManager.default.moveItem(at: directory.appending("k.away"), to: keys.appendingPathComponent("k.key"))
        try await storage("cookies").save(item: Secret(value: "beside"))
        #expect(try await storage("tokens").get() == Secret(value: "the only copy"))
        #expect(try await storage("cookies").get() == Secret(value: "beside"))
        #expect(try SealedFileRegistry(directory: directory.url, keyAlias: "k").names() == ["tokens", "cookies"])
    }

    @Test("with the key truly lost and the values sealed under it deleted, a new first key is made")
    func nothingLeftToStrand() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        func storage(_ name: String) -> EncryptedFileStorage<Secret> {
            EncryptedFileStorage(fileName: name, keyAlias: "k", directory: directory.url, keyStore: FileKeyStore(directory: keys))
        }
        try await storage("tokens").save(item: Secret(value: "lost"))
        try FileManager.default.removeItem(at: keys.appendingPathComponent("k.key"))
        await #expect(throws: StorageError.self) { try await storage("cookies").save(item: Secret(value: "x")) }
        try await storage("tokens").delete()
        try await storage("cookies").save(item: Secret(value: "fresh start"))
        #expect(try await storage("cookies").get() == Secret(value: "fresh start"))
    }

    @Test("another alias's files in the same directory refuse nothing, and a plain or damaged sibling holds no key")
    func otherAliasesAndDamage() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = FileKeyStore(directory: directory.appending("keys"))
        try await EncryptedFileStorage<Secret>(fileName: "a", keyAlias: "A", directory: directory.url, keyStore: keys).save(item: Secret(value: "a"))
        try await EncryptedFileStorage<Secret>(fileName: "b", keyAlias: "B", directory: directory.url, keyStore: keys).save(item: Secret(value: "b"))
        #expect(try await EncryptedFileStorage<Secret>(fileName: "b", keyAlias: "B", directory: directory.url, keyStore: keys).get()?.value == "b")

        // A sibling of alias C that was damaged (no longer an envelope) strands nothing.
        try await EncryptedFileStorage<Secret>(fileName: "c1", keyAlias: "C", directory: directory.url, keyStore: keys).save(item: Secret(value: "c"))
        try await keys.deleteKeys(for: "C")
        try Data("not an envelope".utf8).write(to: directory.appending("c1"))
        try await EncryptedFileStorage<Secret>(fileName: "c2", keyAlias: "C", directory: directory.url, keyStore: keys).save(item: Secret(value: "c2"))
    }

    @Test("a crafted registry: names leading out of the directory are not followed, garbage and huge files are typed errors")
    func craftedRegistry() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = FileKeyStore(directory: directory.appending("keys"))
        let registry = SealedFileRegistry(directory: directory.url, keyAlias: "k")
        // A sealed file outside the directory, named through `..`: not followed.
        let outside = TemporaryDirectory()
        defer { outside.remove() }
        try await EncryptedFileStorage<Secret>(fileName: "elsewhere", keyAlias: "k", directory: outside.url,
                                               keyStore: FileKeyStore(directory: outside.appending("keys"))).save(item: Secret(value: "x"))
        let escape = "../" + outside.url.lastPathComponent + "/elsewhere"
        try JSONEncoder().encode([escape, ".hidden", ""]).write(to: registry.file.url)
        #expect(try registry.names().isEmpty)
        try await EncryptedFileStorage<Secret>(fileName: "t", keyAlias: "k", directory: directory.url, keyStore: keys).save(item: Secret(value: "t"))

        for (label, bytes) in [("garbage", Data("{\"not\": \"a list\u{1b}[31m\"}".utf8)),
                               ("huge", Data(repeating: UInt8(ascii: " "), count: SealedFileRegistry.sizeLimit + 1))] {
            try bytes.write(to: registry.file.url)
            let fresh = EncryptedFileStorage<Secret>(fileName: "u-\(label)", keyAlias: "k", directory: directory.url, keyStore: keys)
            await #expect(Comment(rawValue: label)) { try await fresh.save(item: Secret(value: "u")) } throws: { error in
                guard case .corrupted(let location, let reason)? = error as? StorageError else { return false }
                return location == registry.file.path && !reason.contains("\u{1b}")
            }
            #expect(!FileManager.default.fileExists(atPath: directory.appending("u-\(label)").path), "\(label): nothing written")
        }
    }

    @Test("the registry is a file like the others: a symlink in its place is refused, and it is created 0600")
    func registryTrust() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = FileKeyStore(directory: directory.appending("keys"))
        try await EncryptedFileStorage<Secret>(fileName: "t", keyAlias: "k", directory: directory.url, keyStore: keys).save(item: Secret(value: "t"))
        let registry = SealedFileRegistry(directory: directory.url, keyAlias: "k")
        var info = stat()
        #expect(lstat(registry.file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)

        try FileManager.default.removeItem(at: registry.file.url)
        try "[]".write(to: directory.appending("elsewhere"), atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: registry.file.path, withDestinationPath: directory.appending("elsewhere").path)
        let fresh = EncryptedFileStorage<Secret>(fileName: "u", keyAlias: "k", directory: directory.url, keyStore: keys)
        await #expect { try await fresh.save(item: Secret(value: "u")) } throws: { error in
            guard case .untrusted(let path, _, _, _)? = error as? StorageError else { return false }
            return path == registry.file.path
        }
        #expect(try String(contentsOf: directory.appending("elsewhere"), encoding: .utf8) == "[]", "the link's target untouched")
    }

    @Test("4 processes, each saving its own file under one alias into a fresh directory at once: one key, every value opens")
    func siblingsFirstSaveAtOnce() async throws {
        for round in 0..<6 {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let run = try await CofferProcess.stressAtOnce(["write", directory.url.path, "tokens-%p", "0", "10"], processes: 4,
                                                           environment: ["COFFER_STRESS_KEY_ALIAS": "shared"])
            #expect(run.allSucceeded, "round \(round): \(run.failures)")
            let ring = try await FileKeyStore(directory: directory.appending("keys")).keyRing(for: "shared")
            #expect(ring?.keys.count == 1, "round \(round)")
            let names = try SealedFileRegistry(directory: directory.url, keyAlias: "shared").names()
            #expect(names.count == 4, "round \(round): \(names)")
            for name in names {
                let value = try await EncryptedFileStorage<String>(fileName: name, keyAlias: "shared", directory: directory.url).get()
                #expect(value != nil, "round \(round): \(name)")
            }
        }
    }
}
