/// A seam that lets tests run another process at an exact moment of a keyring write: just
/// before an item is stored or deleted, as the attack reviews did by wrapping libsecret. With
/// it, a test shows that a read-compare-write holds its lock across the write (the other
/// process waits) rather than leaving a window.
///
/// Like `FileFaults`, a hook applies only to the task that set it and the tasks it starts
/// (a task-local value), and production code never sets one.
package enum KeyringFaults {
    /// What a hook is told: the write about to happen and the attributes it matches.
    package enum Write: Sendable {
        case store, clear
    }

    /// Called before every store and delete of ``SecretService``, on the caller's task.
    @TaskLocal package static var beforeWrite: (@Sendable (Write, [String: String]) async -> Void)?
}
