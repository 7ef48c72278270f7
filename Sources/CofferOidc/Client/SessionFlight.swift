import CofferStorage
import Synchronization

/// The order of one session's token operations, shared by every client and user of the same
/// storage (a configuration, its clones, `OidcUser`s): a refresh or sign-in that tasks ask for
/// at once runs once and they all get its result; revoking, ending the session and storing a
/// redirect's tokens wait for it, and it for them, so a refresh in flight never brings back a
/// session that was just revoked.
actor SessionFlight {
    private var tail: Task<Void, Never>?
    private var shared: Task<Result<Token, OidcError>, Never>?

    /// The flight of `storage` (one per storage object).
    static func of(_ storage: AnyObject) -> SessionFlight {
        flights.withLock { flights in
            if let flight = flights[ObjectIdentifier(storage)] { return flight }
            let flight = SessionFlight()
            flights[ObjectIdentifier(storage)] = flight
            return flight
        }
    }

    private static let flights = Mutex<[ObjectIdentifier: SessionFlight]>([:])

    /// Runs `work` after the operations queued before it, or joins the one of its kind that
    /// is already queued or running.
    func token(_ work: @escaping @Sendable () async -> Result<Token, OidcError>) async -> Result<Token, OidcError> {
        if let shared { return await shared.value }
        let previous = tail
        let task = Task { await previous?.value; return await work() }
        shared = task
        tail = Task { _ = await task.value }
        let result = await task.value
        if shared == task { shared = nil }
        return result
    }

    /// Runs `work` alone, after every operation queued before it; a token request made while
    /// it waits runs after it.
    func exclusive<R: Sendable>(_ work: @escaping @Sendable () async -> R) async -> R {
        let previous = tail
        let task = Task { await previous?.value; return await work() }
        shared = nil
        tail = Task { _ = await task.value }
        return await task.value
    }
}
