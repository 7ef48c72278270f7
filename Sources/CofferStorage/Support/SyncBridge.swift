import Synchronization

/// Runs async work to completion from synchronous code (the ``StorageClient`` protocol is
/// synchronous; encryptors and key stores are async).
///
/// The work runs on the calling thread, which would otherwise sit blocked: its task prefers a
/// ``CallingThreadExecutor`` that the caller drives until the work is done. So the work needs
/// no other thread to start on, and a caller blocking a cooperative-pool thread cannot starve
/// the work it waits for, however narrow the pool. What the work awaits elsewhere (a dispatch
/// queue's blocking call, a PostgreSQL event loop, an actor with an executor of its own) comes
/// back to the calling thread when it resumes. It is Coffer's one bridge from synchronous to
/// async code.
///
/// Child tasks of the work, and actors it calls, run on the calling thread too, one at a time.
/// While a job there blocks the thread in a nested call (a synchronous Coffer API used inside
/// the work), the others run on ``OffPoolExecutor`` until it returns, so a sibling the nested
/// work waits for still runs. A job that blocks the thread any other way (a semaphore another
/// of the work's tasks signals) stops them all: async code waits by awaiting.
package enum SyncBridge {
    /// Runs `work` on this thread and returns its result, or throws its error.
    package static func run<R: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () async throws(Failure) -> R
    ) throws(Failure) -> R {
        // Called from work this thread is running for an outer call: the outer work's other
        // jobs go off the thread while it waits here.
        let outer = CallingThreadExecutor.current
        outer?.lendJobs()
        defer { outer?.reclaimJobs() }
        let thread = CallingThreadExecutor()
        let result = Mutex<Result<R, Failure>?>(nil)
        Task(executorPreference: thread) {
            let outcome: Result<R, Failure>
            do throws(Failure) { outcome = .success(try await work()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            thread.finish()
        }
        thread.runJobs()
        guard let outcome = result.withLock({ $0.take() }) else { preconditionFailure("a bridged task ended without a result") }
        return try outcome.get()
    }
}
