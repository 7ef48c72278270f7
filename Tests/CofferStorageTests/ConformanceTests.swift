import Foundation
import TestSupport
import CofferStorage
import CofferStorageTesting
import Synchronization
import Testing

@Suite("Conformance suite against every backend")
struct ConformanceTests {
    @Test("MemoryStorage conforms", arguments: [false, true])
    func memory(cacheable: Bool) async throws {
        try await StorageConformance(makeStorage: { MemoryStorage<ConformanceSample>(cacheable: cacheable) }).run()
    }

    @Test("FileStorage conforms", arguments: CacheStrategy.allCases)
    func file(strategy: CacheStrategy) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await StorageConformance(makeStorage: {
            FileStorage<ConformanceSample>(fileName: UUID().uuidString, directory: directory.url, cacheStrategy: strategy)
        }).run()
    }

    @Test("EncryptedFileStorage conforms", arguments: CacheStrategy.allCases)
    func encryptedFile(strategy: CacheStrategy) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await StorageConformance(makeStorage: {
            EncryptedFileStorage<ConformanceSample>(
                fileName: UUID().uuidString, keyAlias: "conformance", directory: directory.url, cacheStrategy: strategy)
        }).run()
    }

    @Test("two EncryptedFileStorage instances on one file, used concurrently, conform")
    func sharedFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let name = UUID().uuidString
        let first = EncryptedFileStorage<ConformanceSample>(fileName: name, directory: directory.url)
        let second = EncryptedFileStorage<ConformanceSample>(fileName: name, directory: directory.url)
        // Calls alternate between the instances: they share no StorageDelegate lock, only the file lock.
        try await StorageConformance(makeStorage: { AlternatingStorage(first, second) }).checkConcurrentAccess()
    }

    @Test("the suite catches a storage that loses writes")
    func suiteCatchesBrokenStorage() async throws {
        await #expect(throws: ConformanceFailure.self) {
            try await StorageConformance(makeStorage: { ForgetfulStorage() }).run()
        }
    }

    @Test("the suite catches a storage that throws when deleting nothing")
    func suiteCatchesStrictDelete() async throws {
        let failure = await #expect(throws: ConformanceFailure.self) {
            try await StorageConformance(makeStorage: { StrictDeleteStorage() }).checkDeleteWhenAbsent()
        }
        #expect(failure?.check == "deleteWhenAbsent")
    }
}

/// Sends each call to one of two storages in turn.
final class AlternatingStorage: Storage {
    let storages: [any Storage<ConformanceSample>]
    let counter = Mutex(0)
    init(_ a: any Storage<ConformanceSample>, _ b: any Storage<ConformanceSample>) { storages = [a, b] }
    private var next: any Storage<ConformanceSample> { storages[counter.withLock { $0 += 1; return $0 % 2 }] }
    func save(item: ConformanceSample) async throws { try await next.save(item: item) }
    func get() async throws -> ConformanceSample? { try await next.get() }
    func delete() async throws { try await next.delete() }
}

/// Broken on purpose: keeps only the first value ever saved.
actor ForgetfulStorage: Storage {
    var value: ConformanceSample?
    func save(item: ConformanceSample) async throws { if value == nil { value = item } }
    func get() async throws -> ConformanceSample? { value }
    func delete() async throws {}
}

/// Broken on purpose: deleting nothing throws.
actor StrictDeleteStorage: Storage {
    struct NothingToDelete: Error {}
    var value: ConformanceSample?
    func save(item: ConformanceSample) async throws { value = item }
    func get() async throws -> ConformanceSample? { value }
    func delete() async throws {
        guard value != nil else { throw NothingToDelete() }
        value = nil
    }
}
