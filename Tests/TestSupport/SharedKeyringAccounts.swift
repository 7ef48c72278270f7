import CofferStorage

/// The keyring accounts the `coffer` tool keeps under its default service prefix are one store
/// shared by every test of the run: `coffer migrate --backend keychain --to sqlite` moves all
/// of them, whichever test added them. Tests that use that store hold this lock, so none sees
/// another's accounts come or go.
public enum SharedKeyringAccounts {
    private static let lock = AsyncLock()

    /// Runs `body` while no other test uses the default keyring accounts.
    public static func exclusively<R>(_ body: () async throws -> R) async rethrows -> R {
        await lock.lock()
        defer { lock.unlock() }
        return try await body()
    }
}
