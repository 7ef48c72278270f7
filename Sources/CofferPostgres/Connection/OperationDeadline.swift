import CofferStorage
import Logging
import Synchronization

/// The time one database operation may take (leasing a connection included), and the way
/// every operation is run under it: a server that is down or does not answer gives
/// ``PostgresStorageError`` (`.unavailable`) when it passes, never a hang. Each
/// ``CofferDatabase`` has its own (``CofferDatabase/Configuration/Options/operationTimeout``).
///
/// The caller is answered when the deadline passes even if the operation does not stop when
/// cancelled (a connection killed at the wrong moment can leave a driver call waiting): the
/// operation is cancelled and left to end on its own, and a warning says so. Such an operation
/// is one transaction, so it either took effect whole or not at all; the error says that the
/// caller cannot know which.
struct OperationDeadline: Sendable {
    let duration: Duration
    var logger = Logger(label: "org.coffer.postgres")

    /// Runs `body`, named `operation` in errors, under the deadline, on the pool's executor (so
    /// callers blocking the cooperative threads cannot starve it); its errors become
    /// ``PostgresStorageError``.
    @discardableResult
    func run<R: Sendable>(_ operation: String, _ body: @escaping @Sendable () async throws -> R) async throws -> R {
        let race = Race<R>()
        let duration = duration, logger = logger
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    race.begin(continuation)
                    let work = Task(executorPreference: OffPoolExecutor.shared) {
                        let outcome: Result<R, any Error>
                        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
                        // Done after the caller was told it had failed: say so when it took effect.
                        if !race.finish(outcome), case .success = outcome {
                            logger.warning("A database operation took effect after its deadline had passed",
                                           metadata: ["operation": "\(operation)"])
                        }
                    }
                    let watch = DeadlineWatch.shared.watch(until: .now + duration) {
                        race.finish(.failure(PostgresStorageError(.unavailable,
                            "The database did not answer within \(duration) while trying to \(operation). Check that the server "
                            + "is running and reachable, or give a loaded one longer (COFFER_DATABASE_TIMEOUT, in seconds, or "
                            + "operationTimeout). The operation is one transaction: it took effect whole or not at all.")))
                    }
                    race.own(work, watch: watch)
                }
            } onCancel: {
                race.finish(.failure(CancellationError()))
            }
        } catch {
            throw PostgresStorageError.from(error, during: operation)
        }
    }
}

/// The operation against its deadline: the first to finish answers the caller, once; then the
/// operation's task is cancelled and its deadline forgotten.
private final class Race<R: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<R, any Error>?
        var answered: Result<R, any Error>?
        var work: Task<Void, Never>?
        var watch: UInt64?
    }

    private let state = Mutex(State())

    /// Keeps the continuation to answer; answers at once if the race was already decided
    /// (cancelled before it began).
    func begin(_ continuation: CheckedContinuation<R, any Error>) {
        let decided = state.withLock { state -> Result<R, any Error>? in
            if let answered = state.answered { return answered }
            state.continuation = continuation
            return nil
        }
        if let decided { continuation.resume(with: decided) }
    }

    /// Keeps the operation's task and deadline to end; ends them at once if the race was
    /// already decided.
    func own(_ work: Task<Void, Never>, watch: UInt64) {
        let decided = state.withLock { state -> Bool in
            state.work = work
            state.watch = watch
            return state.answered != nil
        }
        if decided {
            work.cancel()
            DeadlineWatch.shared.cancel(watch)
        }
    }

    /// Answers the caller with `outcome` unless it was answered already; returns whether this
    /// call answered.
    @discardableResult
    func finish(_ outcome: Result<R, any Error>) -> Bool {
        let (continuation, work, watch, first) = state.withLock { state -> (CheckedContinuation<R, any Error>?, Task<Void, Never>?, UInt64?, Bool) in
            guard state.answered == nil else { return (nil, nil, nil, false) }
            state.answered = outcome
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.watch, true)
        }
        continuation?.resume(with: outcome)
        work?.cancel()
        if let watch { DeadlineWatch.shared.cancel(watch) }
        return first
    }
}
