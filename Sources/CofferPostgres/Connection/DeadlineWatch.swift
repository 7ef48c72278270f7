import CofferStorage
import Synchronization

/// One timer for every database operation under a deadline: each operation registers when
/// it must be answered and what to do then, and one task per process sleeps until the
/// earliest of them, instead of a timer task per operation.
///
/// A timer per operation (a `Task.sleep` that every operation started and then cancelled) cost
/// each operation a task, a timer registered with the dispatch manager and its cancellation:
/// about 15 µs of every save or get under 64 concurrent callers (P7). Here an operation costs
/// a lock and a dictionary entry. The watcher wakes at least every ``checkInterval`` while
/// anything is registered, so a deadline shorter than the one it sleeps towards is seen late
/// by at most that; when nothing is registered, it ends.
final class DeadlineWatch: Sendable {
    /// The watch every ``OperationDeadline`` uses.
    static let shared = DeadlineWatch()

    /// The longest the watcher sleeps while something is registered.
    static let checkInterval = Duration.milliseconds(50)

    private struct Entry {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        var watching = false
    }

    private let state = Mutex(State())

    /// Calls `expire` once `deadline` has passed, unless ``cancel(_:)`` comes first. Returns
    /// the registration to cancel.
    func watch(until deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, start) = state.withLock { state -> (UInt64, Bool) in
            state.nextID += 1
            state.entries[state.nextID] = Entry(deadline: deadline, expire: expire)
            defer { state.watching = true }
            return (state.nextID, !state.watching)
        }
        if start {
            Task(executorPreference: OffPoolExecutor.shared) { await self.run() }
        }
        return id
    }

    /// Forgets a registration (its operation was answered); nothing happens if it expired.
    func cancel(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Sleeps until the earliest deadline (at most ``checkInterval``), expires what is due,
    /// and ends when nothing is registered.
    private func run() async {
        while true {
            let now = ContinuousClock.now
            let (due, earliest) = state.withLock { state -> ([Entry], ContinuousClock.Instant?) in
                let due = state.entries.filter { $0.value.deadline <= now }
                for id in due.keys { state.entries.removeValue(forKey: id) }
                let earliest = state.entries.values.lazy.map(\.deadline).min()
                if earliest == nil { state.watching = false }
                return (Array(due.values), earliest)
            }
            for entry in due { entry.expire() }
            guard let earliest else { return }
            try? await Task.sleep(until: min(earliest, now + Self.checkInterval), clock: .continuous)
        }
    }
}
