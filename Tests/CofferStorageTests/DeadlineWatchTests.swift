import CofferStorage
import Synchronization
import Testing

/// The one timer every PostgreSQL operation's and keyring call's deadline shares.
@Suite("DeadlineWatch")
struct DeadlineWatchTests {
    /// What fired, and when.
    final class Fired: Sendable {
        let times = Mutex<[Int: ContinuousClock.Instant]>([:])
        func record(_ index: Int) { times.withLock { $0[index] = .now } }
        var snapshot: [Int: ContinuousClock.Instant] { times.withLock { $0 } }
    }

    @Test("a deadline fires once, never early; a cancelled one never; a short one registered while the timer waits for a long one is not kept waiting")
    func fires() async throws {
        let watch = DeadlineWatch()
        let fired = Fired()
        let start = ContinuousClock.now
        let long = start + .seconds(3_600)  // never reached, however slowly this test runs
        let longID = watch.watch(until: long) { fired.record(0) }
        // The timer now waits for the long deadline.
        try await Task.sleep(for: .milliseconds(20))
        // Timed from here: under the whole suite's load this task may wake long after `start`.
        let registered = ContinuousClock.now
        let short = registered + .milliseconds(200)
        _ = watch.watch(until: short) { fired.record(1) }
        let cancelled = watch.watch(until: ContinuousClock.now + .milliseconds(100)) { fired.record(2) }
        watch.cancel(cancelled)
        while fired.snapshot[1] == nil, ContinuousClock.now < registered + .seconds(120) { try await Task.sleep(for: .milliseconds(10)) }
        let times = fired.snapshot
        #expect(times[1].map { $0 >= short } == true, "the short deadline fired, not before it passed")
        #expect(times[1].map { $0 < registered + .seconds(120) } == true, "the short deadline did not wait for the hour-long one")
        try await Task.sleep(for: .milliseconds(300))
        #expect(fired.snapshot[2] == nil, "a cancelled deadline never fires")
        #expect(fired.snapshot[0] == nil, "the long deadline has not passed")
        watch.cancel(longID)
    }

    @Test("1,000 deadlines registered and cancelled from 8 tasks at once: none fires; a later one still does")
    func concurrentRegistrations() async throws {
        let watch = DeadlineWatch()
        let fired = Fired()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<125 {
                        let id = watch.watch(until: .now + .seconds(5)) { fired.record(task * 1_000 + index) }
                        watch.cancel(id)
                    }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(fired.snapshot.isEmpty)
        // A registration after every other was cancelled is still timed.
        let expired = Fired()
        _ = watch.watch(until: .now + .milliseconds(50)) { expired.record(1) }
        let start = ContinuousClock.now
        while expired.snapshot.isEmpty, ContinuousClock.now < start + .seconds(120) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(expired.snapshot.count == 1)
    }
}
