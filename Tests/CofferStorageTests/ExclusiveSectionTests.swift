import CofferStorage
import CofferStorageTesting
import Foundation
import TestSupport
import Testing

/// The exclusive section of the file backends: eight storages on one file (each opens its own
/// lock, as eight processes would) add to a counter inside it, and none is lost.
@Suite("Exclusive sections of the file backends")
struct ExclusiveSectionTests {
    @Test("FileStorage: eight holders, no addition lost; the lock file is 0600 beside the data")
    func fileStorage() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await ExclusiveSectionCheck(makeStorage: { FileStorage<Int>(fileName: "counter", directory: directory.url, cacheStrategy: .cache) }).run()
        #expect(try permissions(of: directory.appending(".counter.section.lock")) == 0o600)
    }

    @Test("EncryptedFileStorage: eight holders, no addition lost")
    func encryptedFileStorage() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = FileKeyStore(directory: directory.appending("keys"))
        try await ExclusiveSectionCheck(makeStorage: {
            EncryptedFileStorage<Int>(fileName: "counter", directory: directory.url, keyStore: keys, cacheStrategy: .cache)
        }).run()
    }

    @Test("the check fails for a storage without a section of its own shared by several holders")
    func checkCanFail() async throws {
        let shared = MemoryStorage<Int>()
        await #expect(throws: ConformanceFailure.self) {
            try await ExclusiveSectionCheck(makeStorage: { StorageDelegate(delegate: SharedWithoutSection(inner: shared)) }).run()
        }
    }
}

/// A storage shared by several delegates that offers no section: what the check must catch.
private struct SharedWithoutSection: Storage {
    let inner: MemoryStorage<Int>
    func save(item: Int) async throws { try await inner.save(item: item) }
    func get() async throws -> Int? { try await inner.get() }
    func delete() async throws { try await inner.delete() }
}
