import Dispatch
import Synchronization

/// One timer for every call under a deadline — a PostgreSQL operation (`OperationDeadline`), a
/// blocking keyring call (`BlockingCallRunner`): each registers when it must be answered and
/// what to do then, and a single dispatch timer wakes at the earliest of them, instead of a
/// timer per call.
///
/// A timer per call cost each call a timer registered with libdispatch's manager thread, and
/// its firing long after the call was answered: about 15 µs of every PostgreSQL save or get
/// under 64 concurrent callers (P7), and 5–7 µs of CPU for each of a keyring call's two
/// `asyncAfter`s. Here a call costs a lock and a dictionary entry; a new timer is asked for only
/// when a deadline comes before every one already waited for.
///
/// The timer fires on a serial queue of its own, which libdispatch gives a thread even when the
/// threads that run Coffer's blocking work (``OffPoolExecutor``) and Swift's cooperative pool are
/// all busy: a deadline is answered on time however many calls are stuck.
package final class DeadlineWatch: Sendable {
    /// The watch every caller shares.
    package static let shared = DeadlineWatch()

    private struct Entry {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        /// The earliest wake already asked of the timer queue, if any.
        var wake: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "org.coffer.deadlines")

    /// A watch of its own (tests); everything else shares ``shared``.
    package init() {}

    /// Calls `expire` once `deadline` has passed, unless ``cancel(_:)`` comes first. Returns
    /// the registration to cancel.
    package func watch(until deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, wake) = state.withLock { state -> (UInt64, ContinuousClock.Instant?) in
            state.nextID += 1
            state.entries[state.nextID] = Entry(deadline: deadline, expire: expire)
            guard state.wake.map({ deadline < $0 }) ?? true else { return (state.nextID, nil) }
            state.wake = deadline
            return (state.nextID, deadline)
        }
        if let wake { schedule(wake) }
        return id
    }

    /// Forgets a registration (its operation was answered); nothing happens if it expired.
    package func cancel(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    private func schedule(_ wake: ContinuousClock.Instant) {
        let delay = max(.zero, ContinuousClock.now.duration(to: wake))
        queue.asyncAfter(deadline: .now() + delay.timeInterval) { self.expireDue() }
    }

    /// Expires what is due (outside the lock) and asks for the next wake when no earlier one
    /// is pending.
    private func expireDue() {
        let now = ContinuousClock.now
        let (due, next) = state.withLock { state -> ([Entry], ContinuousClock.Instant?) in
            let due = state.entries.filter { $0.value.deadline <= now }
            for id in due.keys { state.entries.removeValue(forKey: id) }
            if let wake = state.wake, wake <= now { state.wake = nil }
            guard let earliest = state.entries.values.lazy.map(\.deadline).min(),
                  state.wake.map({ earliest < $0 }) ?? true else { return (Array(due.values), nil) }
            state.wake = earliest
            return (Array(due.values), earliest)
        }
        for entry in due { entry.expire() }
        if let next { schedule(next) }
    }
}

extension Duration {
    /// The duration in seconds, as dispatch's deadlines take it.
    var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
