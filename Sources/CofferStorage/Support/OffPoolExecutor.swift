import Dispatch

/// The one place Coffer runs work off Swift's cooperative thread pool: a concurrent dispatch
/// queue of its own, as a task executor.
///
/// Synchronous entry points (the spec's `StorageClient`, `SecuredKeyEncryptor.init?()`) block
/// their thread while async work finishes; on a machine whose cooperative pool is one or two
/// threads wide, that work would starve if it needed the pool too. So everything that may be
/// waited for from a blocked thread runs here: ``SyncBridge``'s work, the PostgreSQL pool and its
/// operations, and libsecret's blocking calls (`BlockingCallRunner`).
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
