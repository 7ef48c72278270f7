import CofferStorage
import Synchronization

/// Fault injection: a real in-memory storage whose operations can be made to fail on demand, and
/// which counts the calls that reach it.
final class FlakyStorage<T: Codable & Sendable>: Storage {
    struct Injected: Error, Equatable { let operation: String }

    private struct State {
        var value: T?
        var failSave = false
        var failGet = false
        var failDelete = false
        var saves = 0
        var gets = 0
        var deletes = 0
    }

    private let state = Mutex(State())

    init(_ initial: T? = nil) { state.withLock { $0.value = initial } }

    func failing(save: Bool? = nil, get: Bool? = nil, delete: Bool? = nil) {
        state.withLock {
            if let save { $0.failSave = save }
            if let get { $0.failGet = get }
            if let delete { $0.failDelete = delete }
        }
    }

    /// What the storage holds, bypassing failures.
    var stored: T? { state.withLock { $0.value } }
    var saveCalls: Int { state.withLock { $0.saves } }
    var getCalls: Int { state.withLock { $0.gets } }

    func save(item: T) async throws {
        try state.withLock {
            $0.saves += 1
            if $0.failSave { throw Injected(operation: "save") }
            $0.value = item
        }
    }

    func get() async throws -> T? {
        try state.withLock {
            $0.gets += 1
            if $0.failGet { throw Injected(operation: "get") }
            return $0.value
        }
    }

    func delete() async throws {
        try state.withLock {
            $0.deletes += 1
            if $0.failDelete { throw Injected(operation: "delete") }
            $0.value = nil
        }
    }
}
