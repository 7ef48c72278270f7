import CofferStorage
import Foundation
import TestSupport
import Testing

/// Issue 30: an item sealed by an encryptor and read without one (or the reverse) was reported
/// as damaged ("not a Coffer envelope … restore the file"), sending people to their backups for
/// data that is fine. It is said to be the encryptor that changed, with the way to move.
@Suite("R13: data read with another kind of encryptor than it was written with")
struct EncryptorChangeTests {
    static func expectChanged(writtenSealed: Bool, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("read without an error")
        } catch let error as StorageError {
            guard case .encryptorChanged(_, let sealed) = error else { Issue.record("\(error)"); return }
            #expect(sealed == writtenSealed)
            #expect(error.localizedDescription.contains(writtenSealed ? "was written sealed by an encryptor" : "was written in plain JSON"))
            #expect(error.localizedDescription.contains("It was left untouched") && !error.localizedDescription.contains("damaged"))
        } catch {
            Issue.record("untyped: \(error)")
        }
    }

    @Test("EncryptedFileStorage's file read by FileStorage, and FileStorage's by EncryptedFileStorage: the encryptor changed, the file kept")
    func files() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = MemoryKeyStore()
        try await EncryptedFileStorage<String>(fileName: "sealed", directory: directory.url, keyStore: keys).save(item: "secret-value")
        let sealedBytes = try Data(contentsOf: directory.appending("sealed"))
        await Self.expectChanged(writtenSealed: true) { _ = try await FileStorage<String>(fileName: "sealed", directory: directory.url).get() }
        #expect(try Data(contentsOf: directory.appending("sealed")) == sealedBytes)

        try await FileStorage<String>(fileName: "plain", directory: directory.url).save(item: "value")
        await Self.expectChanged(writtenSealed: false) {
            _ = try await EncryptedFileStorage<String>(fileName: "plain", directory: directory.url, keyStore: keys).get()
        }
        #expect(try await FileStorage<String>(fileName: "plain", directory: directory.url).get() == "value")
        // Damage stays damage: junk is neither an envelope nor JSON; nor is JSON of another type
        // (a truncated file can leave "5", which a random-damage run once hit).
        for junk in ["not json, not sealed", "5", "{}"] {
            try Data(junk.utf8).write(to: directory.appending("junk"))
            await #expect { _ = try await EncryptedFileStorage<String>(fileName: "junk", directory: directory.url, keyStore: keys).get() } throws: { error in
                if case .decryptionFailed? = error as? StorageError { return true } else { return false }
            }
        }
    }

    @Test("a keyring item sealed by SecuredKeyEncryptor read with NoEncryptor, and the reverse",
          .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
    func keyring() async throws {
        let account = "encryptor-change-\(UUID().uuidString.prefix(8))"
        let sealed = KeychainStorage<String>(account: account, encryptor: try SecuredKeyEncryptor.make(), cacheStrategy: .noCache)
        try await sealed.save(item: "secret-value")
        await Self.expectChanged(writtenSealed: true) { _ = try await KeychainStorage<String>(account: account, cacheStrategy: .noCache).get() }
        try await sealed.delete()
        try await KeychainStorage<String>(account: account, cacheStrategy: .noCache).save(item: "value")
        await Self.expectChanged(writtenSealed: false) { _ = try await sealed.get() }
        try await sealed.delete()
    }
}
