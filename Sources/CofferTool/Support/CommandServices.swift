import CofferPostgres
import CofferStorage
import Foundation

/// The services a command starts while it runs — the PostgreSQL pool — as children of the
/// command's own task group, the way postgres-nio runs `client.run()`: started when the backend
/// is opened, cancelled when the command is done, and a service that stops with an error is
/// reported, never dropped.
enum CommandServices {
    /// Where the running command takes services to start; `nil` outside ``running(_:)``.
    @TaskLocal static var starter: AsyncStream<CofferDatabase>.Continuation?

    /// Runs `body` with a place for services, and returns once it is done and they stopped.
    static func running<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        let (databases, starter) = AsyncStream.makeStream(of: CofferDatabase.self)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            // Off the cooperative pool: a command blocks its thread on the database (the spec's
            // synchronous StorageClient), and the pool must start whatever that thread is.
            group.addTask(executorPreference: OffPoolExecutor.shared) {
                await withDiscardingTaskGroup { services in
                    for await database in databases {
                        services.addTask(executorPreference: OffPoolExecutor.shared) { await run(database) }
                    }
                }
            }
            defer {
                starter.finish()
                group.cancelAll()
            }
            return try await $starter.withValue(starter) { try await body() }
        }
    }

    /// Starts `database`'s pool in the running command's group.
    static func start(_ database: CofferDatabase) throws {
        guard let starter, case .enqueued = starter.yield(database) else {
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
}
