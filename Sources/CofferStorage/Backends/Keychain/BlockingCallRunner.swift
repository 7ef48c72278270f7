import CLibSecret
import Dispatch
import Foundation
import Synchronization

/// Runs libsecret's blocking calls off Swift's cooperative thread pool, each with a deadline.
///
/// Calls run on ``OffPoolExecutor``'s queue (its own threads, never the pool that runs async
/// tasks). Each call gets a `GCancellable`; at the deadline (``DeadlineWatch``) it is cancelled,
/// which makes libsecret return, and the call fails with ``KeychainError/timedOut``. Should the
/// call still not return (a provider that ignores cancellation), the caller is answered
/// `.timedOut` shortly after anyway and the stuck thread is left to finish on its own.
enum BlockingCallRunner {
    private static var queue: DispatchQueue { OffPoolExecutor.shared.queue }
    /// How long past the deadline to wait for a cancelled call before answering without it.
    private static let grace: Duration = .seconds(2)

    /// Runs `body` on a keyring thread with a cancellable that fires at `timeout`.
    static func run<R: Sendable>(
        timeout: Duration, _ body: @escaping @Sendable (UnsafeMutableRawPointer?) throws(SecretCallError) -> R
    ) async throws(KeychainError) -> R {
        let result = await withCheckedContinuation { continuation in
            start(timeout: timeout, body) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Runs `body` like ``run(timeout:_:)`` and blocks the calling thread until it is answered.
    /// Uses no Swift concurrency, so it cannot starve the cooperative pool it may be called from.
    /// For synchronous entry points only (`SecuredKeyEncryptor.init?()`).
    static func runAndWait<R: Sendable>(
        timeout: Duration, _ body: @escaping @Sendable (UnsafeMutableRawPointer?) throws(SecretCallError) -> R
    ) throws(KeychainError) -> R {
        let box = Mutex<Result<R, KeychainError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        start(timeout: timeout, body) { result in
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try box.withLock { $0! }.get()
    }

    /// Starts `body`, arms the deadline, and calls `answer` exactly once.
    private static func start<R: Sendable>(
        timeout: Duration,
        _ body: @escaping @Sendable (UnsafeMutableRawPointer?) throws(SecretCallError) -> R,
        answer: @escaping @Sendable (Result<R, KeychainError>) -> Void
    ) {
        let call = Call<R>(answer: answer)
        call.watch(DeadlineWatch.shared.watch(until: .now + timeout) { call.deadlinePassed() })
        queue.async {
            let outcome: Result<R, KeychainError>
            do throws(SecretCallError) {
                outcome = .success(try body(call.cancellable))
            } catch {
                outcome = .failure(error.keychainError(timedOut: call.didTimeOut))
            }
            call.finish(outcome)
        }
    }

    /// The shared state of one call: its cancellable, whether it finished or timed out, who
    /// answers the caller, and its registration with ``DeadlineWatch``. Every field is guarded
    /// by the mutex.
    private final class Call<R: Sendable>: Sendable {
        private struct State {
            var cancellable: UnsafeMutableRawPointer?
            var finished = false
            var timedOut = false
            var answer: (@Sendable (Result<R, KeychainError>) -> Void)?
            var watch: UInt64?
        }

        private let state: Mutex<State>

        init(answer: @escaping @Sendable (Result<R, KeychainError>) -> Void) {
            state = Mutex(State(cancellable: coffer_secret_cancellable_new(), answer: answer))
        }

        var cancellable: UnsafeMutableRawPointer? { state.withLock { $0.cancellable } }
        var didTimeOut: Bool { state.withLock { $0.timedOut } }

        /// Keeps the registration of the call's deadline, to cancel it when the call returns.
        func watch(_ registration: UInt64) {
            state.withLock { $0.watch = registration }
        }

        /// Called by the keyring thread when the call returned.
        func finish(_ outcome: Result<R, KeychainError>) {
            let (answer, cancellable, watch) = state.withLock { state in
                defer { (state.finished, state.answer, state.cancellable, state.watch) = (true, nil, nil, nil) }
                return (state.answer, state.cancellable, state.watch)
            }
            if let watch { DeadlineWatch.shared.cancel(watch) }
            coffer_secret_cancellable_free(cancellable)
            answer?(outcome)
        }

        /// Called at the deadline: cancels a call still running, and gives it the grace period
        /// to return before the caller is answered without it.
        func deadlinePassed() {
            let running = state.withLock { state in
                state.watch = nil
                guard !state.finished else { return false }
                state.timedOut = true
                coffer_secret_cancellable_cancel(state.cancellable)
                return true
            }
            guard running else { return }
            // Not cancelled when the call returns within the grace: answering then is a no-op.
            _ = DeadlineWatch.shared.watch(until: .now + BlockingCallRunner.grace) { self.answerIfStillWaiting() }
        }

        /// Called after the grace period: answers `.timedOut` if the call never returned.
        func answerIfStillWaiting() {
            let answer = state.withLock { state in
                defer { state.answer = nil }
                return state.answer
            }
            answer?(.failure(.timedOut))
        }
    }
}

/// A failed libsecret call, as the C shim reports it, before it becomes a ``KeychainError``.
struct SecretCallError: Error {
    let status: Int32
    let domain: String
    let code: Int
    let message: String

    /// Takes the status and the C error (clearing it).
    init(status: Int32, error: inout coffer_secret_error) {
        self.status = status
        self.domain = error.domain.map { String(cString: $0) } ?? "coffer"
        self.code = Int(error.code)
        self.message = error.message.map { String(cString: $0) } ?? "unknown error"
        coffer_secret_error_clear(&error)
    }

    private static let cancelledCode = 19  // G_IO_ERROR_CANCELLED

    /// The provider no longer has an item a search had just returned: libsecret's words, or
    /// the bus's answer to a property read on an object path that is gone (gnome-keyring:
    /// "No such interface … on object at path …" or "Object does not exist at path …").
    var isVanishedItem: Bool {
        message.contains("No such secret item") || message.contains("No such object")
            || message.contains("org.freedesktop.DBus.Error.UnknownObject")
            || (message.contains("org.freedesktop.DBus.Error.UnknownMethod") && message.contains("/org/freedesktop/secrets/"))
    }

    func keychainError(timedOut: Bool) -> KeychainError {
        switch Int(status) {
        case Int(COFFER_SECRET_LOCKED):
            return .locked
        case Int(COFFER_SECRET_NO_COLLECTION):
            return .unavailable(reason: "the Secret Service has no default collection; create a keyring and make it "
                + "the default (Seahorse: File > New > Password Keyring), or use the file backend")
        default:
            break
        }
        if domain == "coffer" { return .unavailable(reason: message) }
        if domain == "g-io-error-quark", code == Self.cancelledCode, timedOut { return .timedOut }
        if domain == "g-dbus-error-quark" || domain == "g-io-error-quark" {
            // The connection may be stale (provider restarted): reconnect on the next call.
            coffer_secret_disconnect()
        }
        let noProvider = ["ServiceUnknown", "NameHasNoOwner", "not provided by any .service files", "not activatable"]
        if noProvider.contains(where: message.contains) {
            return .unavailable(reason: "no Secret Service provider is running on the session bus; start one "
                + "(gnome-keyring-daemon --start --components=secrets, or KeePassXC with Secret Service "
                + "integration) or use the file backend")
        }
        if ProcessEnvironment.value("DBUS_SESSION_BUS_ADDRESS") == nil,
           message.contains("D-Bus") || message.contains("dbus") || message.contains("autolaunch") || message.contains("bus") {
            return .unavailable(reason: "there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set); run "
                + "inside a desktop session or under dbus-run-session, or use the file backend on a headless server")
        }
        // SECRET_ERROR_IS_LOCKED; libsecret names its domain "secret-error" (older notes said "-quark").
        if domain == "secret-error" || domain == "secret-error-quark", code == 2 { return .locked }
        return .failed(domain: domain, code: code, message: message)
    }
}
