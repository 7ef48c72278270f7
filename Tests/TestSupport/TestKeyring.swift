import Foundation
import Testing

/// The throwaway gnome-keyring that `scripts/test` starts, and helpers for tests that need a
/// D-Bus session of their own (to lock the keyring, kill it, or run with none).
public enum TestKeyring {
    /// Whether this run has the test keyring (set by `scripts/with-keyring`).
    public static let isRunning = ProcessInfo.processInfo.environment["COFFER_TEST_KEYRING"] == "1"

    /// The reason shown when keyring tests are skipped.
    public static let skipReason: Comment =
        "needs the throwaway gnome-keyring on a private D-Bus session that scripts/test starts; run scripts/test"

    /// The repository's root folder.
    public static let root = PrivateSession.root

    /// Runs `script` with bash in a new private D-Bus session (``PrivateSession``), with a fresh
    /// unlocked gnome-keyring when `keyring` is true.
    public static func runInOwnSession(_ script: String, keyring: Bool, deadline: Duration = .seconds(90)) async throws -> CofferProcess.Result {
        try await PrivateSession.run(script, keyring: keyring, deadline: deadline)
    }

    /// A shell function for ``runInOwnSession(_:keyring:deadline:)`` scripts, `restartDaemon`:
    /// stops the session's keyring daemon and starts it again on the same files ("login"
    /// unlocked, any other keyring locked as loaded from disk), as after logging in again.
    public static let restartDaemon = """
        restartDaemon() {
          kill "$COFFER_TEST_KEYRING_PID"; while kill -0 "$COFFER_TEST_KEYRING_PID" 2> /dev/null; do sleep 0.1; done
          local home=$(dirname "$XDG_DATA_HOME")/home
          printf 'coffer-throwaway-password' | HOME="$home" XDG_DATA_HOME="$home/.local/share" \\
            gnome-keyring-daemon --daemonize --unlock --components=secrets > /dev/null 2>&1
          for _ in $(seq 1 100); do
            gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \\
              --method org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets | grep -q true && break
            sleep 0.1
          done
          COFFER_TEST_KEYRING_PID=$(gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \\
            --method org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets | grep -o '[0-9]*' | tail -1)
        }

        """

    /// A keyring account no other test uses.
    public static func uniqueAccount(_ label: String = #function) -> String {
        "\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))"
    }
}
