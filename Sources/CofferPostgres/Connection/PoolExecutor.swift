import Dispatch

/// The executor the connection pool and the change listener run on: a dispatch queue of their
/// own, not Swift's cooperative pool. A caller blocking cooperative threads while it waits for
/// the database (the synchronous ``PostgresStorageClient`` face, called from async code, on a
/// machine whose pool is one or two threads wide) then cannot stop the pool from making the
/// connection it waits for.
final class PoolExecutor: TaskExecutor {
    static let shared = PoolExecutor()

    private let queue = DispatchQueue(label: "org.coffer.postgres.pool", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
