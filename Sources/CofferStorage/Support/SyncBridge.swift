import Dispatch
import Foundation
import Synchronization

/// Runs async work to completion from synchronous code (the ``StorageClient`` protocol is
/// synchronous; encryptors and key stores are async).
///
/// The work runs on ``OffPoolExecutor``, never on Swift's cooperative pool, so blocking the
/// calling thread (which may itself be a cooperative thread) cannot starve the work it waits
/// for. It is Coffer's one bridge from synchronous to async code.
package enum SyncBridge {
    /// Runs `work` and blocks until it finishes.
    package static func run<R: Sendable>(_ work: @escaping @Sendable () async throws -> R) throws -> R {
        let result = Mutex<Result<R, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: OffPoolExecutor.shared) {
            let outcome: Result<R, any Error>
            do { outcome = .success(try await work()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
