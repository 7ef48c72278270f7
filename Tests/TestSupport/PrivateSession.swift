import Foundation

/// A D-Bus session bus of a test's own (`dbus-run-session` with scripts/dbus-session.conf, or
/// another configuration), with a fresh unlocked gnome-keyring when asked: for tests that lock
/// the keyring, kill it, run with none, or must not share a keyring (and so a keyring lock)
/// with the rest of the suite.
public enum PrivateSession {
    /// The repository's root folder.
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `script` with bash in a new private session bus (no services started on demand),
    /// with a fresh unlocked gnome-keyring when `keyring` is true, in a scratch directory
    /// (`$SCRATCH`). `$COFFER` and `$STRESS` name the built executables; with a keyring,
    /// `$COFFER_TEST_KEYRING_PID` is its daemon. `configuration` replaces the bus's
    /// configuration file.
    public static func run(_ script: String, keyring: Bool, configuration: URL? = nil,
                           deadline: Duration = .seconds(90)) async throws -> CofferProcess.Result {
        let file = configuration ?? root.appendingPathComponent("scripts/dbus-session.conf")
        let wrapper = keyring ? [root.appendingPathComponent("scripts/with-keyring").path] : []
        let scratch = TemporaryDirectory("session")
        defer { scratch.remove() }
        return try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/dbus-run-session"),
            ["--config-file=\(file.path)", "--"] + wrapper + ["bash", "-c", "cd \"$SCRATCH\" || exit 99\n" + script],
            environment: [
                "COFFER": try CofferProcess.executable.path,
                "STRESS": try CofferProcess.builtExecutable("coffer-stress").path,
                "SILENT_PROVIDER": root.appendingPathComponent("Tests/Helpers/silent-secret-service.py").path,
                "SCRATCH": scratch.url.path,
            ],
            deadline: deadline)
    }
}
