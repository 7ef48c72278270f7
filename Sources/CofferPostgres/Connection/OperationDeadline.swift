/// The time one database operation may take (leasing a connection included), and the way
/// every operation is run under it: a server that is down or does not answer gives
/// ``PostgresStorageError`` (`.unavailable`) when it passes, never a hang. Each
/// ``PostgresDatabase`` has its own (``PostgresDatabase/Configuration/Options/operationTimeout``).
struct OperationDeadline: Sendable {
    let duration: Duration

    /// Runs `body`, named `operation` in errors, under the deadline; its errors become
    /// ``PostgresStorageError``.
    @discardableResult
    func run<R: Sendable>(_ operation: String, _ body: @escaping @Sendable () async throws -> R) async throws -> R {
        let duration = duration
        do {
            return try await withThrowingTaskGroup(of: R?.self) { group in
                group.addTask { try await body() }
                group.addTask {
                    try await Task.sleep(for: duration)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let result = first else {
                    throw PostgresStorageError(.unavailable, "The database did not answer within \(duration) while trying to \(operation). "
                        + "Check that the server is running and reachable; nothing was half-written.")
                }
                return result
            }
        } catch {
            throw PostgresStorageError.from(error, during: operation)
        }
    }
}
