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

    /// The flight of `storage` (one per storage object). Flights of storages that are gone are
    /// dropped here, so a server that makes a storage per user does not keep one per user ever seen.
    static func of(_ storage: some AnyObject & Sendable) -> SessionFlight {
        flights.withLock { flights in
            flights = flights.filter { $0.value.storage != nil }
            if let known = flights[ObjectIdentifier(storage)], known.storage === storage { return known.flight }
            let flight = SessionFlight()
            flights[ObjectIdentifier(storage)] = Known(storage: storage, flight: flight)
            return flight
        }
    }

    /// A storage, held weakly, and its flight.
    private struct Known: Sendable {
        weak var storage: (any AnyObject & Sendable)?
        let flight: SessionFlight
    }

    private static let flights = Mutex<[ObjectIdentifier: Known]>([:])

    /// How many flights are kept.
    static var kept: Int { flights.withLock { $0.count } }

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
