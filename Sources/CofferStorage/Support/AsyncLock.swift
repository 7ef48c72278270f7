import Synchronization

/// A first-in, first-out lock that an async task can hold across suspension points.
///
/// `Mutex` must not be held across an `await`; this lock can. Waiters suspend (they do not block a
/// thread) and are resumed in arrival order. It is not re-entrant: a task that calls ``lock()``
/// twice without ``unlock()`` in between waits for itself forever.
package final class AsyncLock: Sendable {
    private struct State {
        var isLocked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var head = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// Waits until the lock is free and takes it.
    package func lock() async {
        // Free: taken at once, without a continuation (the common case, and a cached get's path).
        // Held: the lock is handed over in arrival order (see `unlock()`).
        if state.withLock({ state in
            guard !state.isLocked else { return false }
            state.isLocked = true
            return true
        }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state -> Bool in
                if state.isLocked {
                    state.waiters.append(continuation)
                    return false
                }
                state.isLocked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    /// Releases the lock, handing it directly to the longest waiter if there is one.
    package func unlock() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            precondition(state.isLocked, "AsyncLock.unlock() called while not locked")
            guard state.head < state.waiters.count else {
                state.isLocked = false
                state.waiters.removeAll(keepingCapacity: true)
                state.head = 0
                return nil
            }
            let waiter = state.waiters[state.head]
            state.head += 1
            return waiter
        }
        next?.resume()
    }

    /// How many tasks wait for the lock now (for tests that need to know a waiter queued).
    package var waitingCount: Int {
        state.withLock { $0.waiters.count - $0.head }
    }

    /// Runs `body` while holding the lock.
    package func withLock<R>(_ body: () async throws -> R) async rethrows -> R {
        await lock()
        defer { unlock() }
        return try await body()
    }
}
