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

    /// A fresh directory whose storages share the key alias `k`, with their key in `keys/`.
    struct SharedAlias: Sendable {
        let directory = TemporaryDirectory()
        var keys: URL { directory.appending("keys") }

        @Sendable func storage(_ name: String) -> EncryptedFileStorage<Secret> {
            EncryptedFileStorage(fileName: name, keyAlias: "k", directory: directory.url, keyStore: FileKeyStore(directory: keys))
        }
    }

    /// A fresh directory whose storages, of any alias, keep their keys in one `keys/` store.
    struct OneDirectory: Sendable {
        let directory = TemporaryDirectory()
        var keys: FileKeyStore { FileKeyStore(directory: directory.appending("keys")) }

        @Sendable func storage(_ name: String, _ alias: String) -> EncryptedFileStorage<Secret> {
            EncryptedFileStorage(fileName: name, keyAlias: alias, directory: directory.url, keyStore: keys)
        }
    }

    /// A ``FileKeyStore`` with a place for someone else to act: before every lookup (and
    /// before a key is made), and once a key has been made, before the save that asked for it
    /// goes on. The one test double of this suite: it injects other parties' moves, nothing else.
    final class InterposedKeyStore: KeyStore {
        let inner: FileKeyStore
        let beforeLookup: @Sendable () throws -> Void
        let afterCreate: @Sendable () async throws -> Void

        init(inner: FileKeyStore, beforeLookup: @escaping @Sendable () throws -> Void = {},
             afterCreate: @escaping @Sendable () async throws -> Void = {}) {
            self.inner = inner
            self.beforeLookup = beforeLookup
            self.afterCreate = afterCreate
        }

        func primaryKey(for alias: String) async throws -> VersionedKey? {
            try beforeLookup()
            return try await inner.primaryKey(for: alias)
        }
        func key(for alias: String, id: UInt32) async throws -> VersionedKey? {
            try beforeLookup()
            return try await inner.key(for: alias, id: id)
        }
        func createKey(for alias: String) async throws -> VersionedKey {
            try beforeLookup()
            let key = try await inner.createKey(for: alias)
            try await afterCreate()
            return key
        }
        func rotateKey(for alias: String) async throws -> VersionedKey { try await inner.rotateKey(for: alias) }
        func deleteKeys(for alias: String) async throws { try await inner.deleteKeys(for: alias) }
    }

    /// Moves a key file away or back at random: any interleaving of a key file moved about
    /// during one save. A key file in its place while the moved one is away is a second key,
    /// counted.
    final class KeyFileMover: Sendable {
        let keyFile: String
        let aside: String
        let secondKeys = Mutex(0)

        init(keyFile: String, aside: String) {
            self.keyFile = keyFile
            self.aside = aside
        }

        func sawSecondKey() -> Bool { access(keyFile, F_OK) == 0 && access(aside, F_OK) == 0 }

        func move() {
            if sawSecondKey() { secondKeys.withLock { $0 += 1 } }
            if Bool.random() { rename(keyFile, aside) } else { rename(aside, keyFile) }
        }
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
        let mover = KeyFileMover(keyFile: keyFile, aside: directory.appending("k.aside").path)
        let toggling = InterposedKeyStore(inner: FileKeyStore(directory: keys), beforeLookup: mover.move)
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
            #expect(!mover.sawSecondKey(), "round \(round): a second key")
        }
        #expect(mover.secondKeys.withLock { $0 } == 0)
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
        let shared = SharedAlias()
        defer { shared.directory.remove() }
        let (directory, keys, storage) = (shared.directory, shared.keys, shared.storage)
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
        #expect(try SealedFileRegistry(directory: directory.url, keyAlias: "k").names() == ["cookies", "tokens"])
    }

    @Test("with the key truly lost and the values sealed under it deleted, a new first key is made")
    func nothingLeftToStrand() async throws {
        let shared = SharedAlias()
        defer { shared.directory.remove() }
        let (keys, storage) = (shared.keys, shared.storage)
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

    @Test("a sibling's first save while another first save holds its new key, the key file moved away and back: it waits, then uses that key",
          arguments: ["moved back", "deleted"])
    func siblingDuringFirstSave(_ fate: String) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        let keyFile = keys.appendingPathComponent("k.key").path
        let aside = directory.appending("k.aside").path
        @Sendable func plain(_ name: String) -> EncryptedFileStorage<Secret> {
            EncryptedFileStorage(fileName: name, keyAlias: "k", directory: directory.url, keyStore: FileKeyStore(directory: keys))
        }
        let sibling = Mutex<Task<Void, any Error>?>(nil)
        let hook = InterposedKeyStore(inner: FileKeyStore(directory: keys)) {}
        afterCreate: {
            rename(keyFile, aside)
            sibling.withLock { $0 = Task { try await plain("b").save(item: Secret(value: "b")) } }
            try await Task.sleep(for: .milliseconds(200))
            if fate == "moved back" { rename(aside, keyFile) } else { unlink(aside) }
        }
        try await EncryptedFileStorage<Secret>(fileName: "a", keyAlias: "k", directory: directory.url, keyStore: hook)
            .save(item: Secret(value: "a"))
        let outcome = await sibling.withLock { $0! }.result
        if fate == "moved back" {
            try outcome.get()
            #expect(try await plain("a").get() == Secret(value: "a"))
            #expect(try await plain("b").get() == Secret(value: "b"), "b was sealed under the first save's key")
            #expect(try await FileKeyStore(directory: keys).keyRing(for: "k")?.keys.count == 1)
        } else {
            #expect(throws: StorageError.self) { try outcome.get() }
            #expect(!FileManager.default.fileExists(atPath: keyFile), "no second key")
            #expect(!FileManager.default.fileExists(atPath: directory.appending("b").path))
        }
    }

    @Test("two first saves per fresh directory while a thread moves the key file to and fro: every saved value opens")
    func firstSavesWhileKeyMoves() async throws {
        final class Mover: Sendable {
            let stop = Atomic(false)
        }
        var lost: [String] = []
        for round in 0..<60 {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let keys = directory.appending("keys")
            let keyPath = keys.appendingPathComponent("k.key").path
            let awayPath = directory.appending("k.away").path
            let mover = Mover()
            let thread = Thread {
                while !mover.stop.load(ordering: .relaxed) {
                    rename(keyPath, awayPath)
                    usleep(UInt32.random(in: 0...300))
                    rename(awayPath, keyPath)
                    usleep(UInt32.random(in: 0...300))
                }
            }
            thread.start()
            let saved = await withTaskGroup(of: String?.self) { group in
                for name in ["a", "b"] {
                    group.addTask {
                        let storage = EncryptedFileStorage<Secret>(fileName: name, keyAlias: "k", directory: directory.url,
                                                                   keyStore: FileKeyStore(directory: keys))
                        return (try? await storage.save(item: Secret(value: name))) == nil ? nil : name
                    }
                }
                return await group.reduce(into: [String]()) { if let name = $1 { $0.append(name) } }
            }
            mover.stop.store(true, ordering: .relaxed)
            while !thread.isFinished { usleep(1_000) }
            if access(keyPath, F_OK) != 0 { rename(awayPath, keyPath) }
            for name in saved {
                let value = try? await EncryptedFileStorage<Secret>(fileName: name, keyAlias: "k", directory: directory.url,
                                                                    keyStore: FileKeyStore(directory: keys)).get()
                if value != Secret(value: name) { lost.append("round \(round): \(name)") }
            }
        }
        #expect(lost.isEmpty, "saves reported done whose values do not open: \(lost)")
    }

    @Test("a data file named like a registry's companions cannot eat or block the registry")
    func namesThatLookLikeRegistries() async throws {
        let place = OneDirectory()
        defer { place.directory.remove() }
        let (directory, keys, storage) = (place.directory, place.keys, place.storage)
        try await storage("a", "k.tmp").save(item: Secret(value: "only copy"))
        for name in ["sealed-under.k", "sealed-under.k.tmp", "sealed-under.k%2Etmp.list", "sealed-under.k%2Etmp"] {
            try await storage(name, "other").save(item: Secret(value: "x"))
            try await FileStorage<Secret>(fileName: name + "-plain", directory: directory.url).save(item: Secret(value: "x"))
        }
        #expect(try SealedFileRegistry(directory: directory.url, keyAlias: "k.tmp").names() == ["a"])
        try await keys.deleteKeys(for: "k.tmp")
        await #expect(throws: StorageError.self) { try await storage("b", "k.tmp").save(item: Secret(value: "new")) }
        #expect(try await keys.keyRing(for: "k.tmp") == nil, "no second key")
        // An alias whose registry would be a data file's lock file saves as any other.
        try await FileStorage<Secret>(fileName: "sealed-under.j", directory: directory.url).save(item: Secret(value: "x"))
        try await storage("c", "j.lock").save(item: Secret(value: "c"))
        try await storage("d", "j").save(item: Secret(value: "d"))
    }

    @Test("a registry moved aside is written again by the next save of a storage that listed itself before")
    func registryMovedAside() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = FileKeyStore(directory: directory.appending("keys"))
        let longLived = EncryptedFileStorage<Secret>(fileName: "tokens", keyAlias: "k", directory: directory.url, keyStore: keys)
        try await longLived.save(item: Secret(value: "v1"))
        let registry = SealedFileRegistry(directory: directory.url, keyAlias: "k")
        try FileManager.default.moveItem(at: registry.file.url, to: directory.appending("registry.aside"))
        try await longLived.save(item: Secret(value: "v2"))
        #expect(try registry.names() == ["tokens"])
        try await keys.deleteKeys(for: "k")
        await #expect(throws: StorageError.self) {
            try await EncryptedFileStorage<Secret>(fileName: "cookies", keyAlias: "k", directory: directory.url, keyStore: keys).save(item: Secret(value: "c"))
        }
    }

    @Test("a huge listed sibling is looked at by its header only")
    func hugeSibling() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = FileKeyStore(directory: directory.appending("keys"))
        let huge = directory.appending("huge").path
        let fd = open(huge, O_CREAT | O_WRONLY, 0o600)
        ftruncate(fd, 1 << 30)  // sparse: 1 GiB of zeros, not an envelope
        close(fd)
        try SealedFileRegistry(directory: directory.url, keyAlias: "k").register("huge")
        var before = rusage()
        getrusage(RUSAGE_SELF.rawValue, &before)
        try await EncryptedFileStorage<Secret>(fileName: "u", keyAlias: "k", directory: directory.url, keyStore: keys).save(item: Secret(value: "u"))
        var after = rusage()
        getrusage(RUSAGE_SELF.rawValue, &after)
        #expect(after.ru_maxrss - before.ru_maxrss < 256 * 1024, "KiB: the 1 GiB file was not read into memory")
        #expect(try DurableFile(url: URL(fileURLWithPath: huge)).read(prefix: SealedEnvelope.minimumSize)?.count == SealedEnvelope.minimumSize)
    }

    @Test("a listed name stays listed while others list themselves, its file gone or not")
    func namesAreNeverDropped() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let registry = SealedFileRegistry(directory: directory.url, keyAlias: "k")
        try registry.register("gone")
        try registry.register("next")
        try registry.register("later")
        #expect(try registry.names() == ["gone", "later", "next"])
    }

    @Test("a long alias (40 Cyrillic letters) saves: its registry is named by the alias's SHA-256")
    func longAlias() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = FileKeyStore(directory: directory.appending("keys"))
        let alias = String(repeating: "ж", count: 40)
        try await keys.createKey(for: alias)
        let storage = EncryptedFileStorage<Secret>(fileName: "t", keyAlias: alias, directory: directory.url, keyStore: keys)
        try await storage.save(item: Secret(value: "t"))
        #expect(try await storage.get() == Secret(value: "t"))
        let registry = SealedFileRegistry(directory: directory.url, keyAlias: alias)
        #expect(registry.file.url.lastPathComponent.hasPrefix(".sealed-under.="))
        #expect(try registry.names() == ["t"])
    }

    @Test("a file listed before, deleted and saved again, stays listed while another storage lists itself before the write")
    func resavedAfterLongAgo() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        let registry = SealedFileRegistry(directory: directory.url, keyAlias: "k")
        try registry.register("tokens")
        // Another storage lists itself between this save's look at the list and its write.
        let armed = Mutex<(@Sendable () throws -> Void)?>(nil)
        let store = InterposedKeyStore(inner: FileKeyStore(directory: keys)) {
            try armed.withLock { hook in defer { hook = nil }; return hook }?()
        }
        let tokens = EncryptedFileStorage<Secret>(fileName: "tokens", keyAlias: "k", directory: directory.url, keyStore: store)
        try await tokens.save(item: Secret(value: "v1"))
        try await tokens.delete()
        armed.withLock { $0 = { try registry.register("cookies") } }
        try await tokens.save(item: Secret(value: "v2"))
        #expect(try registry.names() == ["cookies", "tokens"])
        try await FileKeyStore(directory: keys).deleteKeys(for: "k")
        let cookies = EncryptedFileStorage<Secret>(fileName: "cookies", keyAlias: "k", directory: directory.url, keyStore: FileKeyStore(directory: keys))
        await #expect(throws: StorageError.self) { try await cookies.save(item: Secret(value: "c")) }
        #expect(try await FileKeyStore(directory: keys).keyRing(for: "k") == nil, "no second key")
    }

    @Test("a file saved under another alias stays on the old alias's list: a first key for the old alias is refused while the file is sealed")
    func nameMovedToAnotherAlias() async throws {
        let place = OneDirectory()
        defer { place.directory.remove() }
        let (directory, keys, storage) = (place.directory, place.keys, place.storage)
        try await storage("tokens", "v1").save(item: Secret(value: "t"))
        try await storage("tokens", "v1").delete()
        try await storage("tokens", "v2").save(item: Secret(value: "t"))
        #expect(try SealedFileRegistry(directory: directory.url, keyAlias: "v1").names() == ["tokens"])
        try await keys.deleteKeys(for: "v1")
        await #expect(throws: StorageError.self) { try await storage("cookies", "v1").save(item: Secret(value: "c")) }
        #expect(try await keys.keyRing(for: "v1") == nil)
        // The way out the threat model names: the retired alias's list moved aside.
        let list = SealedFileRegistry(directory: directory.url, keyAlias: "v1").file.url
        try FileManager.default.moveItem(at: list, to: directory.appending("v1.list.aside"))
        try await storage("cookies", "v1").save(item: Secret(value: "c"))
        #expect(try await storage("tokens", "v2").get() == Secret(value: "t"))
    }
}
