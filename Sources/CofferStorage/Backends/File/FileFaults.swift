#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A seam that lets tests make the file writer's system calls fail, to check that a failure at
/// any step leaves the old value intact and reaches the caller as a typed error.
///
/// A plan applies only to the task that set it (it is a task-local value) and to the file
/// operations that task runs, so tests running side by side do not disturb one another.
/// Production code never sets one; checking for it costs a task-local read per system call.
///
/// ```swift
/// let plan = FileFaultPlan(failing: .fsync, occurrence: 2, code: ENOSPC)
/// try await FileFaults.$plan.withValue(plan) {
///     try await storage.save(item: first)   // succeeds
///     try await storage.save(item: second)  // throws StorageError.io(operation: "fsync", ...)
/// }
/// ```
enum FileFaults {
    /// The plan in force for the current task, if any.
    @TaskLocal static var plan: FileFaultPlan?

    /// Runs `call` unless the plan says this occurrence of `operation` fails; then sets `errno`
    /// and returns -1 as the system call would.
    static func inject<R: BinaryInteger>(_ operation: FileFaultPlan.Operation, _ call: () -> R) -> R {
        guard let plan, plan.shouldFail(operation) else { return call() }
        errno = plan.code
        return -1
    }
}

/// Which call to fail, and how.
final class FileFaultPlan: Sendable {
    /// The system calls of a durable write, in the order they happen.
    enum Operation: String, CaseIterable, Sendable {
        case create, write, fsync, close, rename, syncDirectory
    }

    /// The call to fail.
    let operation: Operation
    /// Which occurrence of it fails: 1 for the first.
    let occurrence: Int
    /// The `errno` it fails with (`ENOSPC`, `EIO`, ...).
    let code: Int32
    private let seen = Mutex<[Operation: Int]>([:])

    init(failing operation: Operation, occurrence: Int = 1, code: Int32) {
        self.operation = operation
        self.occurrence = occurrence
        self.code = code
    }

    /// Counts this call and says whether it is the one to fail.
    func shouldFail(_ operation: Operation) -> Bool {
        seen.withLock { seen in
            seen[operation, default: 0] += 1
            return operation == self.operation && seen[operation] == occurrence
        }
    }

    /// How many times `operation` was called under this plan.
    func calls(of operation: Operation) -> Int {
        seen.withLock { $0[operation] ?? 0 }
    }
}
