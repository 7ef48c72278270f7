import CofferStorage
import Dispatch
import Foundation
import Synchronization
import Testing

/// ``SyncBridge``: synchronous code waits for async work, which runs on the waiting thread.
@Suite("SyncBridge", .serialized)  // one test at a time: two of them block cooperative threads on purpose
struct SyncBridgeTests {
    private struct Refused: Error, Equatable { let reason: String }

    @Test("the work runs on the calling thread, before and after it awaits another thread")
    func workRunsOnTheCallingThread() {
        let caller = pthread_self()
        let threads = SyncBridge.run { () async -> [pthread_t] in
            let before = pthread_self()
            // Resumed by a dispatch thread: the rest of the work comes back to the caller.
            await withCheckedContinuation { continuation in DispatchQueue.global().async { continuation.resume() } }
            let afterResume = pthread_self()
            try? await Task.sleep(for: .milliseconds(5))
            return [before, afterResume, pthread_self()]
        }
        #expect(threads.allSatisfy { pthread_equal($0, caller) != 0 })
    }

    @Test("a typed error reaches the caller as its own type; a value as itself")
    func resultsAndTypedErrors() {
        #expect(SyncBridge.run { () async -> Int in 42 } == 42)
        do {
            _ = try SyncBridge.run { () async throws(Refused) -> Int in throw Refused(reason: "no") }
            Issue.record("the error was not thrown")
        } catch {
            #expect(error == Refused(reason: "no"))  // `error` is a Refused: the bridge kept the type
        }
    }

    @Test("bridges nest, and the work's child tasks and actors run on the waiting thread")
    func nestedBridgesChildTasksAndActors() {
        let counter = Counter()
        let total = SyncBridge.run { () async -> Int in
            await withTaskGroup(of: Int.self) { group in
                for index in 1...4 {
                    group.addTask {
                        await counter.add(index)
                        // A synchronous API used inside async work: a bridge within a bridge.
                        return SyncBridge.run { () async -> Int in
                            await withCheckedContinuation { continuation in DispatchQueue.global().async { continuation.resume() } }
                            return index * 10
                        }
                    }
                }
                return await group.reduce(0, +)
            }
        }
        #expect(total == 100)
        #expect(SyncBridge.run { await counter.value } == 10)
    }

    // The two deadlocks an attack review (helper-21) found in the first version, where a nested
    // call held up the outer work's other jobs on the blocked thread.

    @Test("a nested call inside a child task waits for a sibling: the sibling still runs")
    func nestedCallWaitsForASibling() throws {
        let received = try onThreadOfItsOwn(seconds: 60) {
            SyncBridge.run { () async -> Int in
                let (numbers, sender) = AsyncStream.makeStream(of: Int.self)
                return await withTaskGroup(of: Int.self) { group in
                    // A synchronous API used in a child, waiting for what the sibling sends.
                    group.addTask { SyncBridge.run { () async -> Int in await numbers.first { _ in true } ?? -1 } }
                    group.addTask {
                        sender.yield(7)
                        sender.finish()
                        return 0
                    }
                    return await group.reduce(0, +)
                }
            }
        }
        #expect(received == 7)
    }

    @Test("a nested call needs an actor that a sibling left scheduled on the blocked thread")
    func nestedCallNeedsAnActorScheduledOnTheThread() throws {
        let counter = Counter()
        let total = try onThreadOfItsOwn(seconds: 60) {
            SyncBridge.run { () async -> Int in
                await withTaskGroup(of: Void.self) { group in
                    // Suspended inside the actor; when the sleep ends, the actor's job is
                    // queued for the thread that is blocked in the nested call below.
                    group.addTask { await counter.addAfter(milliseconds: 50, 1) }
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(10))
                        _ = SyncBridge.run { await counter.add(1) }
                    }
                }
                return await counter.value
            }
        }
        #expect(total == 2)
    }

    @Test("callers blocking every cooperative thread at once still get their results")
    func blockedCooperativePool() async throws {
        // Twice as many blocking callers as the pool has threads: work that needed a free pool
        // thread, or one of the callers', would never finish.
        let callers = 2 * max(ProcessInfo.processInfo.activeProcessorCount, 2)
        let counter = Counter()
        let results = try await withDeadline(seconds: 60) {
            await withTaskGroup(of: Int.self) { group in
                for index in 0..<callers {
                    group.addTask {
                        SyncBridge.run { () async -> Int in
                            await counter.add(1)
                            try? await Task.sleep(for: .milliseconds(20))
                            return index
                        }
                    }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        #expect(results.sorted() == Array(0..<callers))
        #expect(await counter.value == callers)
    }

    /// Runs `body` on a thread of its own (no cooperative thread involved), and fails the test
    /// (instead of hanging it) if it has not returned after `seconds`.
    private func onThreadOfItsOwn<R: Sendable>(seconds: Int, _ body: @escaping @Sendable () -> R) throws -> R {
        try waitAtMost(seconds) { deliver in Thread.detachNewThread { deliver(body()) } }
    }

    /// Runs `body` in a task on the cooperative pool, and fails the test (instead of hanging
    /// it) if it has not finished after `seconds`.
    private func withDeadline<R: Sendable>(seconds: Int, _ body: @escaping @Sendable () async -> R) async throws -> R {
        try waitAtMost(seconds) { deliver in Task.detached { deliver(await body()) } }
    }

    /// Starts something that delivers one value, and waits for it at most `seconds`.
    private func waitAtMost<R: Sendable>(_ seconds: Int, _ start: (@escaping @Sendable (R) -> Void) -> Void) throws -> R {
        let outcome = Mutex<R?>(nil)
        let done = DispatchSemaphore(value: 0)
        start { value in
            outcome.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + .seconds(seconds)) == .success, let value = outcome.withLock({ $0.take() }) else {
            Issue.record("the bridged calls did not finish within \(seconds) s: a deadlock")
            throw CancellationError()
        }
        return value
    }
}

private actor Counter {
    private(set) var value = 0
    func add(_ amount: Int) { value += amount }
    func addAfter(milliseconds: Int, _ amount: Int) async {
        try? await Task.sleep(for: .milliseconds(milliseconds))
        value += amount
    }
}
