import Dispatch
import Glibc
import Synchronization

/// A task executor whose jobs run on the thread that waits for them: ``SyncBridge`` lends the
/// blocked caller's thread to the work it waits for, instead of handing the work to another
/// thread and waking it.
///
/// Jobs run in the order they were enqueued, one at a time, inside ``runJobs()``, until
/// ``finish()`` is called and nothing is left to run. A job may come from any thread (a
/// continuation resumed by a dispatch queue, a PostgreSQL event loop); it then waits for the
/// waiting thread to take it.
///
/// While the waiting thread is itself blocked in a nested ``SyncBridge`` call (a synchronous API
/// called inside the work), it cannot run this executor's other jobs — a sibling task the nested
/// work waits for, an actor scheduled here — so until that call returns they run on
/// ``OffPoolExecutor``'s threads instead (``lendJobs()``), as every job did before this executor
/// existed. After ``runJobs()`` has returned, a late job (an actor's, scheduled here by the
/// finished work) goes there too.
final class CallingThreadExecutor: TaskExecutor {
    private struct State {
        var jobs: [UnownedJob] = []
        /// Where the next job to run is in `jobs` (popped one at a time, so that none is held
        /// back when the thread blocks in a nested call).
        var next = 0
        var finished = false
        /// Jobs go to `OffPoolExecutor` instead: the waiting thread is blocked in a nested call,
        /// or gone.
        var lent = false
    }

    private let state = Mutex(State())
    /// Signalled once for every job enqueued and once by ``finish()``; the waiting thread sleeps
    /// on it only when it found nothing to run.
    private let wakeUp = DispatchSemaphore(value: 0)

    /// The executor whose ``runJobs()`` this thread is in (the innermost), if any.
    static var current: CallingThreadExecutor? {
        pthread_getspecific(runningKey).map { Unmanaged<CallingThreadExecutor>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let runningKey: pthread_key_t = {
        var key = pthread_key_t()
        guard pthread_key_create(&key, nil) == 0 else { preconditionFailure("no thread-specific key left for SyncBridge") }
        return key
    }()

    /// Takes `job` for the waiting thread, or hands it to `OffPoolExecutor` while that thread
    /// is lent out.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let lent = state.withLock { state in
            if !state.lent { state.jobs.append(job) }
            return state.lent
        }
        if lent { runOffPool(job) } else { wakeUp.signal() }
    }

    /// Says the work is done: ``runJobs()`` returns once it has run what was enqueued before.
    func finish() {
        state.withLock { $0.finished = true }
        wakeUp.signal()
    }

    /// Runs jobs on this thread as they come, and returns after ``finish()``. Called once, by the
    /// thread that waits.
    func runJobs() {
        let outer = pthread_getspecific(Self.runningKey)
        pthread_setspecific(Self.runningKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.runningKey, outer) }
        let executor = asUnownedTaskExecutor()
        while true {
            let (job, done) = state.withLock { state -> (UnownedJob?, Bool) in
                guard state.next == state.jobs.count else {
                    defer { state.next += 1 }
                    return (state.jobs[state.next], false)
                }
                state.jobs.removeAll(keepingCapacity: true)
                state.next = 0
                // Done: from now on a late job runs off the pool rather than waiting forever.
                if state.finished { state.lent = true }
                return (nil, state.finished)
            }
            if let job {
                job.runSynchronously(on: executor)
            } else if done {
                return
            } else {
                wakeUp.wait()
            }
        }
    }

    /// The waiting thread is about to block in a nested call: until ``reclaimJobs()``, this
    /// executor's jobs, those waiting and those to come, run on `OffPoolExecutor`'s threads.
    func lendJobs() {
        let waiting = state.withLock { state in
            state.lent = true
            defer {
                state.jobs.removeAll(keepingCapacity: true)
                state.next = 0
            }
            return Array(state.jobs[state.next...])
        }
        for job in waiting { runOffPool(job) }
    }

    /// The nested call returned: the waiting thread takes this executor's jobs again.
    func reclaimJobs() {
        state.withLock { $0.lent = false }
    }

    /// Runs `job` on `OffPoolExecutor`'s queue, as this executor (which it keeps alive meanwhile).
    private func runOffPool(_ job: UnownedJob) {
        OffPoolExecutor.shared.queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
