import CofferStorage
import Synchronization
import Testing

/// The lock every storage operation of a ``StorageDelegate`` takes: a free lock is taken without
/// suspending, a held one is handed to its waiters in arrival order.
@Suite("AsyncLock")
struct AsyncLockTests {
    @Test("one holder at a time, across suspension points, for 8 tasks × 200 turns")
    func mutualExclusion() async {
        let lock = AsyncLock()
        let inside = Shared((now: 0, most: 0, turns: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<200 {
                        await lock.withLock {
                            inside.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                            await Task.yield()
                            inside.withLock { $0.now -= 1; $0.turns += 1 }
                        }
                    }
                }
            }
        }
        let result = inside.withLock { $0 }
        #expect(result.most == 1)
        #expect(result.turns == 1_600)
    }

    @Test("waiters get the lock in the order they asked, and a newcomer queues behind them")
    func arrivalOrder() async throws {
        let lock = AsyncLock()
        let order = Shared<[Int]>([])
        await lock.lock()
        var waiters: [Task<Void, Never>] = []
        for index in 0..<5 {
            waiters.append(Task {
                await lock.withLock { order.withLock { $0.append(index) } }
            })
            // Each waiter queues before the next one starts.
            while lock.waitingCount < index + 1 { await Task.yield() }
        }
        lock.unlock()
        // The lock went to waiter 0 directly: a task that asks now comes after all five.
        await lock.withLock { order.withLock { $0.append(99) } }
        for waiter in waiters { await waiter.value }
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4, 99])
        #expect(lock.waitingCount == 0)
    }
}

/// A value behind a lock that several tasks can hold a reference to.
private final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
}
