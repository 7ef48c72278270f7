import Dispatch
import Synchronization

/// The one place Coffer runs work off Swift's cooperative thread pool: a concurrent dispatch
/// queue of its own, as a task executor.
///
/// Synchronous entry points (the spec's `StorageClient`, `SecuredKeyEncryptor.init?()`) block
/// their thread while async work finishes; on a machine whose cooperative pool is one or two
/// threads wide, that work would starve if it needed the pool too. ``SyncBridge`` runs the work
/// itself on the blocked thread; what the work waits for that runs beside it goes here: the
/// PostgreSQL pool and its operations, and libsecret's blocking calls (`BlockingCallRunner`).
package final class OffPoolExecutor: TaskExecutor {
    /// The executor every module shares.
    package static let shared = OffPoolExecutor()

    /// The queue behind it, for blocking calls that are not Swift tasks.
    package let queue = DispatchQueue(label: "org.coffer.off-pool", attributes: .concurrent)

    /// Runs `job` on the queue.
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

extension OffPoolExecutor {
    /// Runs blocking synchronous `work` for async code, on a thread of its own: a fresh serial
    /// queue, which libdispatch gives a new thread when its pool is busy. Work that blocks and
    /// may itself wait for this executor (through ``SyncBridge``) must not run *on* the
    /// executor: its concurrent queue has about as many threads as cores, and callers blocked
    /// on all of them would leave none for the work they wait for.
    ///
    /// `work`, and whatever it captured, is released before the caller resumes, as a direct
    /// call's would be: a store it used is closed (its WAL checkpointed) when the caller lets go
    /// of it, not later on the queue's thread.
    package static func runBlocking<T: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let pending = PendingWork(work)
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            DispatchQueue(label: "org.coffer.blocking-call").async {
                let outcome = pending.run()
                continuation.resume(returning: outcome)
            }
        }
        return try result.get()
    }
}

/// The work of one ``OffPoolExecutor/runBlocking(_:)`` call, dropped as soon as it has run.
private final class PendingWork<T: Sendable, Failure: Error>: Sendable {
    private let work: Mutex<(@Sendable () throws(Failure) -> T)?>

    init(_ work: @escaping @Sendable () throws(Failure) -> T) {
        self.work = Mutex(work)
    }

    /// Runs the work once and releases it (and what it captured) before returning.
    func run() -> Result<T, Failure> {
        guard let work = self.work.withLock({ $0.take() }) else { preconditionFailure("the work of a blocking call ran twice") }
        return Result { () throws(Failure) -> T in try work() }
    }
}
