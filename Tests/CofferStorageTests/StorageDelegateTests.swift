import TestSupport
import CofferStorage
import Synchronization
import Testing

@Suite("StorageDelegate and cache strategies")
struct StorageDelegateTests {
    @Test("cacheable: true means .cache, false means .noCache")
    func cacheableMapsToStrategy() {
        #expect(StorageDelegate(delegate: FlakyStorage<String>(), cacheable: true).cacheStrategy == .cache)
        #expect(StorageDelegate(delegate: FlakyStorage<String>(), cacheable: false).cacheStrategy == .noCache)
        #expect(StorageDelegate(delegate: FlakyStorage<String>()).cacheStrategy == .noCache)
    }

    // MARK: .noCache

    @Test(".noCache goes to storage on every get and surfaces every error")
    func noCache() async throws {
        let backing = FlakyStorage<String>("a")
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .noCache)
        #expect(try await storage.get() == "a")
        #expect(try await storage.get() == "a")
        #expect(backing.getCalls == 2)

        backing.failing(get: true)
        await #expect(throws: FlakyStorage<String>.Injected(operation: "get")) { try await storage.get() }
        backing.failing(save: true)
        await #expect(throws: FlakyStorage<String>.Injected(operation: "save")) { try await storage.save(item: "b") }
        backing.failing(delete: true)
        await #expect(throws: FlakyStorage<String>.Injected(operation: "delete")) { try await storage.delete() }
        #expect(backing.stored == "a")
    }

    // MARK: .cache

    @Test(".cache reads through once, then serves memory")
    func cacheReadThrough() async throws {
        let backing = FlakyStorage<String>("a")
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cache)
        #expect(try await storage.get() == "a")
        #expect(try await storage.get() == "a")
        #expect(backing.getCalls == 1)
        // Served from memory even when the storage now fails.
        backing.failing(get: true)
        #expect(try await storage.get() == "a")
    }

    @Test(".cache remembers an absent value after a successful read")
    func cacheRemembersAbsent() async throws {
        let backing = FlakyStorage<String>()
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cache)
        #expect(try await storage.get() == nil)
        #expect(try await storage.get() == nil)
        #expect(backing.getCalls == 1)
    }

    @Test(".cache updates memory only after the storage accepted a save")
    func cacheWriteThrough() async throws {
        let backing = FlakyStorage<String>()
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cache)
        try await storage.save(item: "a")
        #expect(backing.stored == "a")
        #expect(try await storage.get() == "a")
        #expect(backing.getCalls == 0, "a saved value is served from memory")

        backing.failing(save: true)
        await #expect(throws: FlakyStorage<String>.Injected.self) { try await storage.save(item: "b") }
        #expect(try await storage.get() == "a", "a rejected save must not change the memory copy")
    }

    @Test(".cache surfaces a read error when memory holds nothing")
    func cacheReadErrorWithoutCopy() async throws {
        let backing = FlakyStorage<String>("a")
        backing.failing(get: true)
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cache)
        await #expect(throws: FlakyStorage<String>.Injected.self) { try await storage.get() }
    }

    @Test(".cache delete clears memory only when the storage deleted")
    func cacheDelete() async throws {
        let backing = FlakyStorage<String>()
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cache)
        try await storage.save(item: "a")
        backing.failing(delete: true)
        await #expect(throws: FlakyStorage<String>.Injected.self) { try await storage.delete() }
        #expect(try await storage.get() == "a")
        backing.failing(delete: false)
        try await storage.delete()
        #expect(try await storage.get() == nil)
        #expect(backing.stored == nil)
    }

    // MARK: .cacheOnFailure

    @Test(".cacheOnFailure reads storage while it works")
    func cacheOnFailureReadsStorage() async throws {
        let backing = FlakyStorage<String>("a")
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cacheOnFailure)
        #expect(try await storage.get() == "a")
        try await backing.save(item: "changed elsewhere")
        #expect(try await storage.get() == "changed elsewhere")
        #expect(backing.getCalls == 2)
    }

    @Test(".cacheOnFailure serves the last known value when a read fails, and logs it")
    func cacheOnFailureServesCopy() async throws {
        let logs = LogCapture()
        let backing = FlakyStorage<String>("s3cr3t-value")
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cacheOnFailure, logger: logs.logger())
        #expect(try await storage.get() == "s3cr3t-value")
        backing.failing(get: true)
        #expect(try await storage.get() == "s3cr3t-value")
        #expect(logs.all.contains { $0.level == .warning && $0.text.contains("Read failed") })
        #expect(!logs.all.contains { $0.text.contains("s3cr3t") }, "values must never be logged")
    }

    @Test(".cacheOnFailure surfaces a read error when there is no copy")
    func cacheOnFailureNoCopy() async throws {
        let backing = FlakyStorage<String>("a")
        backing.failing(get: true)
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cacheOnFailure)
        await #expect(throws: FlakyStorage<String>.Injected.self) { try await storage.get() }
    }

    @Test(".cacheOnFailure absorbs a failed save as pending and writes it on the next get")
    func cacheOnFailurePendingRetry() async throws {
        let logs = LogCapture()
        let backing = FlakyStorage<String>("old")
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cacheOnFailure, logger: logs.logger())

        backing.failing(save: true)
        try await storage.save(item: "new")  // does not throw
        #expect(backing.stored == "old")
        #expect(logs.all.contains { $0.level == .warning && $0.text.contains("Save failed") })

        // Storage still failing: the pending item is served, and stays pending.
        #expect(try await storage.get() == "new")
        #expect(backing.stored == "old")
        #expect(backing.saveCalls == 2, "the pending write was retried")

        // Storage recovers: the next get writes the pending item first.
        backing.failing(save: false)
        #expect(try await storage.get() == "new")
        #expect(backing.stored == "new")
        #expect(backing.saveCalls == 3)
        // Nothing pending any more: no further saves.
        _ = try await storage.get()
        #expect(backing.saveCalls == 3)
    }

    @Test(".cacheOnFailure: a newer save replaces the pending one")
    func cacheOnFailureNewerSaveWins() async throws {
        let backing = FlakyStorage<String>()
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cacheOnFailure)
        backing.failing(save: true)
        try await storage.save(item: "first")
        backing.failing(save: false)
        try await storage.save(item: "second")
        #expect(backing.stored == "second")
        #expect(try await storage.get() == "second")
        #expect(backing.stored == "second", "the superseded pending item must not be written later")
    }

    @Test(".cacheOnFailure delete clears memory and pending, and surfaces its error")
    func cacheOnFailureDelete() async throws {
        let backing = FlakyStorage<String>("a")
        let storage = StorageDelegate(delegate: backing, cacheStrategy: .cacheOnFailure)
        backing.failing(save: true)
        try await storage.save(item: "pending")
        backing.failing(delete: true)
        await #expect(throws: FlakyStorage<String>.Injected.self) { try await storage.delete() }

        backing.failing(save: false, get: true)
        // Memory and pending were cleared: no copy to serve, so the read error surfaces.
        await #expect(throws: FlakyStorage<String>.Injected.self) { try await storage.get() }
        backing.failing(get: false)
        #expect(try await storage.get() == "a", "the pending write was dropped by delete")
    }

    // MARK: Serialisation

    @Test("operations on one instance never overlap, including the delegate call")
    func operationsAreSerialised() async throws {
        let probe = OverlapProbe()
        let storage = StorageDelegate(delegate: probe, cacheStrategy: .noCache)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<24 {
                group.addTask {
                    switch index % 3 {
                    case 0: try await storage.save(item: index)
                    case 1: _ = try await storage.get()
                    default: try await storage.delete()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(probe.maximumInFlight == 1)
    }

    @Test("the overlap probe does detect overlapping calls")
    func probeDetectsOverlap() async throws {
        let probe = OverlapProbe()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 { group.addTask { try await probe.save(item: index) } }
            try await group.waitForAll()
        }
        #expect(probe.maximumInFlight > 1)
    }
}

/// A storage that sleeps inside each call and records how many calls were in flight at once.
final class OverlapProbe: Storage {
    private let counts = Mutex((current: 0, maximum: 0))

    var maximumInFlight: Int { counts.withLock { $0.maximum } }

    private func enter() {
        counts.withLock {
            $0.current += 1
            $0.maximum = max($0.maximum, $0.current)
        }
    }

    private func leave() { counts.withLock { $0.current -= 1 } }

    private func work() async throws {
        enter()
        defer { leave() }
        try await Task.sleep(for: .milliseconds(5))
    }

    func save(item: Int) async throws { try await work() }
    func get() async throws -> Int? { try await work(); return nil }
    func delete() async throws { try await work() }
}
