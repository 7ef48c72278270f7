import Foundation
import TestSupport
import CofferStorage
import Testing

/// Keyring faults, each in a private D-Bus session of its own so that locking or killing a
/// keyring there cannot disturb the other tests.
@Suite("Keyring faults, each in its own D-Bus session", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct KeychainFaultTests {
    @Test("a locked collection gives .locked for reads and writes, and SecuredKeyEncryptor() is nil")
    func lockedCollection() async throws {
        let result = try await TestKeyring.runInOwnSession("""
            "$STRESS" keychain-write item 1 || exit 10
            "$STRESS" keychain-lock || exit 11
            "$STRESS" keychain-get item 5000; echo "get-status $?"
            "$STRESS" keychain-write item 1 2>&1; echo "write-status $?"
            "$STRESS" secured-probe
            """, keyring: true)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first { $0.hasPrefix("error:") }?.contains("The keyring is locked") == true, "\(lines)")
        #expect(lines.contains("get-status 1"))
        #expect(lines.contains { $0.hasPrefix("save 0: The keyring is locked") }, "\(lines)")
        #expect(lines.contains("write-status 1"))
        #expect(lines.contains("nil"))
        ReliabilityReport.record("R5", "locked collection", tried: "get, save, SecuredKeyEncryptor()",
                                 outcome: lines.contains("get-status 1") && lines.contains("write-status 1") ? "KeychainError.locked; encryptor nil; no prompt" : "UNEXPECTED")
    }

    /// Issue 30: with a session bus and a keyring daemon but no collection yet, `get` said
    /// "nothing stored" while `save` threw `.unavailable`: an app concluded "signed out" where
    /// the keyring was broken.
    @Test("R13: a keyring without a default collection: get throws .unavailable as save does, never nil")
    func noDefaultCollection() async throws {
        let result = try await TestKeyring.runInOwnSession("""
            mkdir -p "$SCRATCH/home"
            HOME="$SCRATCH/home" XDG_DATA_HOME="$SCRATCH/home/.local/share" \
              gnome-keyring-daemon --daemonize --components=secrets > /dev/null 2>&1 < /dev/null
            for _ in $(seq 1 100); do
              dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \\
                org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2> /dev/null | grep -q 'boolean true' && break
              sleep 0.1
            done
            "$STRESS" keychain-get item 5000; echo "get-status $?"
            "$STRESS" keychain-write item 1 2>&1; echo "write-status $?"
            """, keyring: false)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first { $0.hasPrefix("error:") }?.contains("the Secret Service has no default collection") == true, "\(lines) \(result.stderr)")
        #expect(lines.contains("get-status 1") && !lines.contains("nil"), "\(lines)")
        #expect(lines.contains { $0.contains("no default collection") } && lines.contains("write-status 1"), "\(lines)")
        ReliabilityReport.record("R13", "keyring daemon without a default collection", tried: "get, save",
                                 outcome: lines.contains("get-status 1") ? "both KeychainError.unavailable (no default collection)" : "GET SAID NOTHING STORED")
    }

    @Test("no session bus gives .unavailable at once, and SecuredKeyEncryptor() is nil")
    func noSessionBus() async throws {
        let stress = try CofferProcess.builtExecutable("coffer-stress")
        // Timed inside the child's shell, so the test process's own scheduling does not count.
        let get = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"),
            ["-c", "start=$(date +%s%N); \"$0\" keychain-get item 10000; echo \"status $? after $(( ($(date +%s%N) - start) / 1000000 )) ms\"",
             stress.path],
            removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(get.stdout.contains("there is no D-Bus session bus"), "\(get.stdout)")
        #expect(get.stdout.contains("status 1 after"))
        // The error is .unavailable, not .timedOut: it did not wait for the 10 s timeout. (How
        // fast it answers is a benchmark's business; measured ~20 ms on an idle machine.)
        #expect(Self.milliseconds(get.stdout).map { $0 < 8000 } == true, "answered without waiting for the 10 s timeout")
        let probe = try await CofferProcess.run(executable: stress, ["secured-probe"], removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(probe.stdout.hasPrefix("nil\n"))

        let cli = try await CofferProcess.run(
            executable: try CofferProcess.executable, ["store", "get", "--backend", "keychain", "x"],
            removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(cli.status == 69, "unavailable (the README's exit-status table)")
        #expect(cli.stderr.hasPrefix("coffer: The OS keyring (Secret Service) cannot be used: there is no D-Bus session bus"))
        ReliabilityReport.record("R5", "no session bus", tried: "get (10 s timeout), SecuredKeyEncryptor(), coffer store",
                                 outcome: ".unavailable after \(Self.milliseconds(get.stdout) ?? -1) ms")
    }

    @Test("no libsecret gives .unavailable saying what to install")
    func noLibsecret() async throws {
        let result = try await CofferProcess.run(
            executable: try CofferProcess.executable, ["store", "list", "--backend", "keychain"],
            environment: ["COFFER_LIBSECRET": "/nonexistent/libsecret-missing-for-test.so.0"])
        #expect(result.status == 69, "unavailable (the README's exit-status table)")
        #expect(result.stderr.contains("libsecret-1.so.0 is not installed"), "\(result.stderr)")
        #expect(result.stderr.contains("apt-get install libsecret-1-0"))
        let probe = try await CofferProcess.run(
            executable: try CofferProcess.builtExecutable("coffer-stress"), ["secured-probe"],
            environment: ["COFFER_LIBSECRET": "/nonexistent/libsecret-missing-for-test.so.0"])
        #expect(probe.stdout.hasPrefix("nil\n"))
    }

    @Test("a bus with no Secret Service provider gives .unavailable naming what to start")
    func noProvider() async throws {
        let result = try await TestKeyring.runInOwnSession("""
            start=$(date +%s%N)
            "$STRESS" keychain-get item 10000
            echo "status $? after $(( ($(date +%s%N) - start) / 1000000 )) ms"
            """, keyring: false)
        #expect(result.stdout.contains("no Secret Service provider is running"), "\(result.stdout)")
        #expect(result.stdout.contains("gnome-keyring-daemon"))
        #expect(result.stdout.contains("status 1 after"))
        #expect(Self.milliseconds(result.stdout).map { $0 < 8000 } == true, "answered without waiting for the 10 s timeout")
        ReliabilityReport.record("R5", "bus without a Secret Service provider", tried: "get (10 s timeout)",
                                 outcome: ".unavailable after \(Self.milliseconds(result.stdout) ?? -1) ms")
    }

    @Test("a provider that never answers gives .timedOut after the timeout")
    func silentProvider() async throws {
        let result = try await TestKeyring.runInOwnSession("""
            /usr/bin/python3 "$SILENT_PROVIDER" 60 > provider.out 2> provider.err &
            provider=$!
            for _ in $(seq 200); do grep -q ready provider.out 2>/dev/null && break; sleep 0.1; done
            grep -q ready provider.out || { cat provider.err >&2; exit 20; }
            start=$(date +%s%N)
            "$STRESS" keychain-get item 1500
            echo "status $? after $(( ($(date +%s%N) - start) / 1000000 )) ms"
            kill "$provider"
            """, keyring: false)
        #expect(result.stdout.contains("error: The keyring did not answer in time"), "\(result.status) \(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("raise the timeout (COFFER_KEYRING_TIMEOUT, in seconds)"), "it says how: \(result.stdout)")
        let milliseconds = Self.milliseconds(result.stdout) ?? -1
        #expect((1500..<5000).contains(milliseconds), "timed out after \(milliseconds) ms with a 1500 ms timeout")
        #expect(result.stdout.contains("status 1"))
        ReliabilityReport.record("R5", "provider that accepts the call and never replies", tried: "get (1.5 s timeout)",
                                 outcome: ".timedOut after \(milliseconds) ms")
    }

    @Test("the daemon killed mid-run gives errors, not a hang, and nothing after is silently dropped")
    func daemonKilled() async throws {
        let result = try await TestKeyring.runInOwnSession("""
            "$STRESS" keychain-write item 5000 2>writer.err &
            writer=$!
            sleep 0.5
            kill "$COFFER_TEST_KEYRING_PID"
            wait "$writer"; echo "writer-status $?"
            head -c 2000 writer.err
            "$STRESS" keychain-get item 3000; echo "get-status $?"
            """, keyring: true, deadline: .seconds(60))
        #expect(!result.timedOut, "the writer hung after the daemon died")
        #expect(result.stdout.contains("writer-status 1"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("no Secret Service provider is running"), "\(result.stdout)")
        #expect(result.stdout.contains("get-status 1"))
        ReliabilityReport.record("R5", "daemon killed while a writer saves", tried: "5,000 saves, then a get",
                                 outcome: !result.timedOut && result.stdout.contains("writer-status 1") ? "the writer stops with an error, no hang; get: .unavailable" : "UNEXPECTED")
    }

    @Test("strongBoxPreferred falls back to the file key store when there is no keyring")
    func strongBoxFallback() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let result = try await CofferProcess.run(
            executable: try CofferProcess.builtExecutable("coffer-stress"), ["strongbox", directory.url.path],
            removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "file\nkey file present\n")
        #expect(result.stderr.contains("the OS keyring cannot be used; keeping the key in a 0600 file"), "the fallback is logged")
        #expect(try String(contentsOf: directory.appending("keystore"), encoding: .utf8) == "file\n", "the choice is recorded")
    }

    @Test("a directory whose key was recorded in the keyring fails clearly without one, instead of switching to a key file")
    func recordedKeyringNotSwitched() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try "secret-service\n".write(to: directory.appending("keystore"), atomically: true, encoding: .utf8)
        let result = try await CofferProcess.run(
            executable: try CofferProcess.builtExecutable("coffer-stress"), ["strongbox", directory.url.path],
            removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("keeps its key in the OS keyring, which cannot be used now"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("keys").path), "no second key was made")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("strongbox").path), "nothing was written")
    }

    /// The N of the "after N ms" the test scripts print.
    static func milliseconds(_ output: String) -> Int? {
        guard let range = output.range(of: "after ") else { return nil }
        return Int(output[range.upperBound...].prefix { $0.isNumber })
    }
}
