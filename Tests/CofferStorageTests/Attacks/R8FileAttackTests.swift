import CofferStorage
import Foundation
import TestSupport
import Testing

/// R8 items 5, 6 and 9 against the storage core: planted files, links and names.
@Suite("R8 attacks on files: planted directories, links, leftovers and look-alike names")
struct R8FileAttackTests {
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
            return message.contains("Coffer will not use \(planted.path) (owner uid \(SecondUser.identity!.uid)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted.path).isEmpty)
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
            return reason.contains("symbolic link")
        }
        #expect(!FileManager.default.fileExists(atPath: elsewhere.path))
    }

    @Test("6: lock files live in XDG_RUNTIME_DIR or the data directory, never a shared folder like /tmp")
    func lockDirectory() throws {
        let locks = try DataDirectory.locks()
        let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].map { $0 + "/coffer" }
        #expect(locks.path == runtime || locks.standardizedFileURL == DataDirectory.default.standardizedFileURL, "\(locks.path)")
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
