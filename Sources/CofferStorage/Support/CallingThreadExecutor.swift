import Dispatch
import Synchronization

/// A task executor whose jobs run on the thread that waits for them: ``SyncBridge`` lends the
/// blocked caller's thread to the work it waits for, instead of handing the work to another
/// thread and waking it.
///
/// Jobs run in the order they were enqueued, one at a time, inside ``runJobs()``, until
/// ``finish()`` is called and nothing is left to run. A job may come from any thread (a
/// continuation resumed by a dispatch queue, a PostgreSQL event loop); it then waits for the
/// waiting thread to take it.
final class CallingThreadExecutor: TaskExecutor {
    private struct State {
        var jobs: [UnownedJob] = []
        var finished = false
    }

    private let state = Mutex(State())
    /// Signalled once for every job enqueued and once by ``finish()``; the waiting thread sleeps
    /// on it only when it found nothing to run.
    private let wakeUp = DispatchSemaphore(value: 0)

    /// Takes `job` for the waiting thread.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.jobs.append(job) }
        wakeUp.signal()
    }

    /// Says the work is done: ``runJobs()`` returns once it has run what was enqueued before.
    func finish() {
        state.withLock { $0.finished = true }
        wakeUp.signal()
    }

    /// Runs jobs on this thread as they come, and returns after ``finish()``. Called once, by the
    /// thread that waits.
    func runJobs() {
        let executor = asUnownedTaskExecutor()
        var batch: [UnownedJob] = []
        while true {
            let finished = state.withLock { state in
                swap(&batch, &state.jobs)
                return state.finished
            }
            if batch.isEmpty {
                if finished { return }
                wakeUp.wait()
                continue
            }
            for job in batch { job.runSynchronously(on: executor) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
