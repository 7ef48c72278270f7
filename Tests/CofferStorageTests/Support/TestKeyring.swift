import Foundation
import TestSupport
import Testing

/// The throwaway gnome-keyring that `scripts/test` starts, and helpers for tests that need a
/// D-Bus session of their own (to lock the keyring, kill it, or run with none).
enum TestKeyring {
    /// Whether this run has the test keyring (set by `scripts/with-keyring`).
    static let isRunning = ProcessInfo.processInfo.environment["COFFER_TEST_KEYRING"] == "1"

    /// The reason shown when keyring tests are skipped.
    static let skipReason: Comment =
        "needs the throwaway gnome-keyring on a private D-Bus session that scripts/test starts; run scripts/test"

    /// The repository's root folder.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `script` with bash in a new private D-Bus session (no services started on demand),
    /// with a fresh unlocked gnome-keyring when `keyring` is true. `$COFFER` and `$STRESS` name
    /// the built executables; with a keyring, `$COFFER_TEST_KEYRING_PID` is its daemon.
    static func runInOwnSession(_ script: String, keyring: Bool, deadline: Duration = .seconds(90)) async throws -> CofferProcess.Result {
        let session = ["--config-file=\(root.appendingPathComponent("scripts/dbus-session.conf").path)", "--"]
        let wrapper = keyring ? [root.appendingPathComponent("scripts/with-keyring").path] : []
        let scratch = TemporaryDirectory("session")
        defer { scratch.remove() }
        return try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/dbus-run-session"),
            session + wrapper + ["bash", "-c", "cd \"$SCRATCH\" || exit 99\n" + script],
            environment: [
                "COFFER": try CofferProcess.executable.path,
                "STRESS": try CofferProcess.builtExecutable("coffer-stress").path,
                "SILENT_PROVIDER": root.appendingPathComponent("Tests/Helpers/silent-secret-service.py").path,
                "SCRATCH": scratch.url.path,
            ],
            deadline: deadline)
    }

    /// A keyring account no other test uses.
    static func uniqueAccount(_ label: String = #function) -> String {
        "\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))"
    }
}
