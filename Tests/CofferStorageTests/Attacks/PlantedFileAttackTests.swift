import CofferStorage
import Foundation
import TestSupport
import Testing

/// R8 items 5, 6 and 9 against the storage core: planted files, links and names.
@Suite("R8 attacks on files: planted directories, links, leftovers and look-alike names")
struct PlantedFileAttackTests {
    struct Secret: Codable, Sendable, Equatable { var value: String }

    @Test("5: an encrypted store in a directory another user owns is refused before anything is written",
          .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
    func plantedDirectory() async throws {
        let planted = try await SecondUser.plantDirectory(mode: "755")
        defer { try? FileManager.default.removeItem(at: planted) }
        let storage = EncryptedFileStorage<Secret>(fileName: "tokens", directory: planted)
        // Refused when the key is to be created there (the error comes wrapped by the encryptor).
        await #expect { try await storage.save(item: Secret(value: "s3cr3t-r8")) } throws: { error in
            let message = (error as? LocalizedError)?.errorDescription ?? ""
            return message.contains("\(planted.path) belongs to uid \(SecondUser.identity!.uid), not to you")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted.path).isEmpty)
    }

    @Test("9: the directory of a one-character name (which traps Foundation's deletingLastPathComponent on Linux)")
    func oneCharacterNames() async throws {
        #expect(FileTrust.parentDirectory(of: "d") == "")
        #expect(FileTrust.parentDirectory(of: "d/") == "")
        #expect(FileTrust.parentDirectory(of: "/d") == "/")
        #expect(FileTrust.parentDirectory(of: "a/d") == "a")
        #expect(FileTrust.parentDirectory(of: "a//d//") == "a")
        #expect(FileTrust.parentDirectory(of: "/") == "/")
        #expect(FileTrust.parentDirectory(of: "") == "")
        // Reading, locking and creating by such a name, relative to the working directory, is
        // tried by PassphraseToolTests through coffer (a test must not move this process's).
    }

    @Test("6: a leftover temporary file, even a link to another file, is removed, never written through")
    func plantedTemporaryFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let victim = directory.appending("victim.txt")
        try Data("untouched".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(at: directory.appending(".tokens.tmp"), withDestinationURL: victim)
        let storage = FileStorage<Secret>(fileName: "tokens", directory: directory.url)
        try await storage.save(item: Secret(value: "v"))
        #expect(try await storage.get() == Secret(value: "v"))
        #expect(try String(contentsOf: victim, encoding: .utf8) == "untouched")
        #expect(try permissions(of: directory.appending("tokens")) == 0o600)
    }

    @Test("6: a lock file planted as a link is refused, and nothing is created where it points")
    func plantedLockLink() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let elsewhere = directory.appending("nologin")
        try FileManager.default.createSymbolicLink(at: directory.appending(".tokens.lock"), withDestinationURL: elsewhere)
        let storage = FileStorage<Secret>(fileName: "tokens", directory: directory.url)
        await #expect { try await storage.save(item: Secret(value: "v")) } throws: { error in
            guard case .untrusted(_, _, _, let reason)? = error as? StorageError else { return false }
            return reason == .symbolicLink
        }
        #expect(!FileManager.default.fileExists(atPath: elsewhere.path))
    }

    @Test("6: the keyring's lock files live in your home as the password database names it, never a shared folder like /tmp")
    func lockDirectory() throws {
        let locks = try DataDirectory.locks()
        let home = try #require(getpwuid(geteuid())?.pointee.pw_dir.map { String(cString: $0) })
        #expect(locks.path == home + "/.local/share/coffer/locks", "\(locks.path)")
        #expect(locks.path != "/tmp/coffer-\(getuid())")
        let mode = try permissions(of: locks)
        #expect(mode & 0o022 == 0)
    }

    @Test("5: key files others can read, and key directories others can write, are refused")
    func permissiveKeys() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = FileKeyStore(directory: directory.appending("keys"))
        try await keys.createKey(for: "alias")
        let file = try keys.fileURL(for: "alias")
        chmod(file.path, 0o640)
        await #expect(throws: (any Error).self) { try await FileKeyStore(directory: directory.appending("keys")).primaryKey(for: "alias") }
        chmod(file.path, 0o600)
        #expect(try await FileKeyStore(directory: directory.appending("keys")).primaryKey(for: "alias") != nil)
    }

    @Test("2: with the key file gone, a save over a value sealed with it is refused: no second key, nothing overwritten")
    func keyFileMissing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        func storage() -> EncryptedFileStorage<Secret> {
            EncryptedFileStorage(fileName: "tokens", keyAlias: "k", directory: directory.url, keyStore: FileKeyStore(directory: keys))
        }
        try await storage().save(item: Secret(value: "the only copy"))
        let sealed = try Data(contentsOf: directory.appending("tokens"))
        try FileManager.default.moveItem(at: keys, to: directory.appending("keys.away"))

        for attempt in ["save", "rotate"] {
            await #expect(Comment(rawValue: attempt)) {
                if attempt == "save" { try await storage().save(item: Secret(value: "new")) } else { try await storage().rotateKey() }
            } throws: { error in
                guard case .keyMissing(_, "k", 1)? = error as? StorageError else { return false }
                return (error as? LocalizedError)?.errorDescription?.contains("no new key was made") == true
            }
        }
        #expect(try Data(contentsOf: directory.appending("tokens")) == sealed, "left byte for byte")
        #expect(!FileManager.default.fileExists(atPath: keys.appendingPathComponent("k.key").path), "no second key")
        try FileManager.default.moveItem(at: directory.appending("keys.away"), to: keys)
        #expect(try await storage().get() == Secret(value: "the only copy"))
        try await storage().save(item: Secret(value: "new"))
        #expect(try await storage().get() == Secret(value: "new"), "with the key back, saves work")
    }

    @Test("3: a data directory below one another user owns, or reached through their link, is refused; yours may be a link",
          .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
    func untrustedAncestors() async throws {
        // The attacker's own directory (0755: only they can change it) holds a directory of the
        // victim's (0700, owned by the victim): everything checked so far looks fine, but the
        // attacker can rename it away and put their own in its place between two opens.
        let planted = try await SecondUser.plantDirectory(mode: "755")
        defer { try? FileManager.default.removeItem(at: planted) }
        let inside = planted.appendingPathComponent("coffer")
        #expect(try await SecondUser.run("mkdir -m 777 '\(inside.path)'").status == 0)
        chown(inside.path, geteuid(), getegid())
        chmod(inside.path, 0o700)
        let below = EncryptedFileStorage<Secret>(fileName: "tokens", directory: inside, keyStore: MemoryKeyStore())
        await #expect { try await below.save(item: Secret(value: "s3cr3t-r8")) } throws: { error in
            guard case .untrusted(let path, _, _, let reason)? = error as? StorageError else { return false }
            return path == planted.path && reason == .foreignDirectoryOnTheWay(owner: SecondUser.identity!.uid, you: UInt32(geteuid()))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: inside.path).isEmpty)

        // A link the attacker planted in /tmp (sticky, so they may create there) to a directory.
        let mine = TemporaryDirectory()
        defer { mine.remove() }
        let link = URL(fileURLWithPath: "/tmp/coffer-r8-link-\(UUID().uuidString.prefix(8))")
        #expect(try await SecondUser.run("ln -s '\(mine.url.path)' '\(link.path)'").status == 0)
        defer { unlink(link.path) }
        let through = EncryptedFileStorage<Secret>(fileName: "tokens", directory: link, keyStore: MemoryKeyStore())
        await #expect { try await through.save(item: Secret(value: "s3cr3t-r8")) } throws: { error in
            guard case .untrusted(let path, _, _, let reason)? = error as? StorageError else { return false }
            guard case .foreignLinkOnTheWay(to: _, owner: SecondUser.identity!.uid, you: UInt32(geteuid())) = reason else { return false }
            return path == link.path
        }
        // The same link made by you is fine.
        let own = URL(fileURLWithPath: "/tmp/coffer-r8-own-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createSymbolicLink(at: own, withDestinationURL: mine.url)
        defer { unlink(own.path) }
        let yours = EncryptedFileStorage<Secret>(fileName: "tokens", directory: own, keyStore: MemoryKeyStore())
        try await yours.save(item: Secret(value: "v"))
        #expect(try await yours.get() == Secret(value: "v"))
    }

    @Test("9: a file sealed as 'café' (NFD) copied over 'café' (NFC) is an identity mismatch, not a value")
    func lookAlikeNames() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = MemoryKeyStore()
        let decomposed = "cafe\u{301}", composed = "caf\u{e9}"
        #expect(decomposed == composed, "Swift's String equality is what the binding must not use")
        let nfd = EncryptedFileStorage<Secret>(fileName: decomposed, keyAlias: "k", directory: directory.url, keyStore: keys)
        try await nfd.save(item: Secret(value: "nfd"))
        try FileManager.default.copyItem(atPath: directory.url.path + "/" + decomposed, toPath: directory.url.path + "/" + composed)
        let nfc = EncryptedFileStorage<Secret>(fileName: composed, keyAlias: "k", directory: directory.url, keyStore: keys)
        await #expect { try await nfc.get() } throws: { error in
            if case .identityMismatch? = error as? StorageError { return true }
            return false
        }
    }
}
