import CofferPostgres
import CofferStorage
import Synchronization

/// The services a command starts while it runs — the PostgreSQL pool — kept the way
/// postgres-nio's `client.run()` is meant to be: started when the backend is opened, cancelled
/// and waited for when the command is done, and a service that stops with an error is reported,
/// never dropped. A command that opens no database starts no thread for it.
enum CommandServices {
    /// The running command's services; `nil` outside ``running(_:)``.
    @TaskLocal private static var current: Services?

    /// Runs `body` with a place for services, and returns once it is done and they stopped.
    static func running<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        let services = Services()
        let result: Result<R, any Error>
        do { result = .success(try await $current.withValue(services) { try await body() }) } catch { result = .failure(error) }
        await services.stop()
        return try result.get()
    }

    /// Starts `database`'s pool for the running command.
    static func start(_ database: CofferDatabase) throws {
        guard let current, current.start({ await run(database) }) else {
            throw CommandFailure("the database's connection pool has no command to run in (an internal error; please report it)")
        }
    }

    private static func run(_ database: CofferDatabase) async {
        do {
            try await database.run()
            // Cancelled: the command is done. Otherwise the pool ended under the command.
            if !Task.isCancelled { StandardStreams.note("coffer: warning: the PostgreSQL connection pool stopped before the command ended") }
        } catch is CancellationError {
            // The command is done.
        } catch {
            StandardStreams.note("coffer: warning: the PostgreSQL connection pool stopped: \(error)")
        }
    }

    /// The services of one command: each a task on ``OffPoolExecutor`` (a command blocks its own
    /// thread on the database through the synchronous `StorageClient`, so the pool must run on
    /// threads of its own), cancelled and awaited by ``stop()``.
    private final class Services: Sendable {
        private let state = Mutex<(tasks: [Task<Void, Never>], stopped: Bool)>(([], false))

        /// Starts `service`, unless the command is done (`false`).
        func start(_ service: @escaping @Sendable () async -> Void) -> Bool {
            state.withLock { state in
                guard !state.stopped else { return false }
                state.tasks.append(Task(executorPreference: OffPoolExecutor.shared, operation: service))
                return true
            }
        }

        /// Cancels every service and returns once all have ended.
        func stop() async {
            let tasks = state.withLock { state in
                state.stopped = true
                return state.tasks
            }
            for task in tasks { task.cancel() }
            for task in tasks { await task.value }
        }
    }
}
