import CofferAuthenticator
import CofferStorage
import Foundation
import Logging
import Synchronization
import TestSupport
import Testing

/// The fifth round (issue 20, items 1, 2 and 4): the keyring client's read-compare-writes and
/// the lock they share, attacked by another `coffer` process at the exact moment the attack
/// review found (a keyring write between a read and its write), and by shells of the same user
/// with other environments. Each test fails on the code before the fix.
@Suite("Fifth round: the keyring's lock covers every write, whatever the environment",
       .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct KeyringLockAttackTests {
    static let codesPerProcess = Int(ProcessInfo.processInfo.environment["COFFER_R8_CODES"] ?? "") ?? 10
    // A secret of this test's own: the keyring's HOTP counter ledger is shared by the whole run.
    let secret = TestSecret.random()

    /// `coffer` on the keyring backend, with a data directory of the test's and `extra` on top.
    func keyring(_ home: URL, _ arguments: [String], input: String? = nil, environment extra: [String: String] = [:]) async throws -> CofferProcess.Result {
        try await CofferProcess.run(executable: try CofferProcess.executable, arguments, input: input,
                                    environment: ["COFFER_HOME": home.path, "COFFER_BACKEND": "keychain"].merging(extra) { $1 },
                                    removing: ["COFFER_PASSWORD"])
    }

    /// Runs `body` with a fresh data directory and a HOTP account (at `counter`) in the keyring
    /// under an issuer no other test uses, holding the suite's lock on the tool's keyring
    /// accounts (`coffer migrate` moves all of them).
    func withKeyringAccount(_ label: String, counter: Int = 0, _ body: (TemporaryDirectory, String) async throws -> Void) async throws {
        try await SharedKeyringAccounts.exclusively {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let issuer = "\(label)\(UUID().uuidString.prefix(8))"
            let added = try await keyring(directory.url, ["add", "-"],
                                          input: "otpauth://hotp/\(issuer):bob?secret=\(secret)&issuer=\(issuer)&counter=\(counter)\n")
            try #require(added.status == 0, "\(added.stderr)")
            try await body(directory, issuer)
        }
    }

    func hotp(_ counter: UInt64) throws -> String {
        try OathGenerator.hotp(secret: Base32.decode(secret), counter: counter)
    }

    @Test("1: a code issued from the keyring while migrate removes the mechanism is never issued again from SQLite")
    func migrateRacingCode() async throws {
        try await withKeyringAccount("Move", counter: 5) { directory, issuer in
            let source = try KeychainStorageClient.make(logger: Logger(label: "fifth-round"))
            let target = try SQLiteStorageClient(path: directory.appending("target.sqlite").path,
                                                 encryptor: AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore()))
            // Just before the migration deletes the mechanism's item, `coffer code` runs, as the
            // review's libsecret wrapper made it: it may issue a code only if the migration
            // leaves it a window (it has 3 s to do so).
            let racer = Racer { try await keyring(directory.url, ["code", issuer, "--raw"]) }
            let report = try KeyringFaults.$beforeWrite.withValue({ write, attributes in
                if write == .clear, attributes["service"] == "org.coffer.authenticator.mechanism" { await racer.startOnce() }
            }) {
                try StorageMigration.move(from: source, to: target)
            }
            #expect(report.mechanisms == 1)
            let raced = try #require(await racer.result(), "the racing coffer code ran")
            let after = try await AuthenticatorClient(storage: target).code(for: #require(target.getAllAccounts().first.flatMap {
                target.getMechanismsForAccount(account: $0).first
            })).code
            if raced.status == 0 {
                #expect(raced.stdout != after + "\n", "the code \(raced.stdout) was issued twice, from the keyring and then SQLite")
            } else {
                let fifth = try hotp(5)
                #expect(after == fifth, "nothing was issued from the keyring, so SQLite issues counter 5")
            }
            #expect(try await SecretService().search(["service": "org.coffer.authenticator.mechanism", "issuer": issuer]).isEmpty)
        }
    }

    @Test("4: remove racing code: the removed mechanism is not written back into the keyring")
    func removeRacingCode() async throws {
        try await withKeyringAccount("Gone") { directory, issuer in
            let client = try KeychainStorageClient.make(logger: Logger(label: "fifth-round"))
            let uuid = try #require(client.getAllAccounts().first { $0.issuer == issuer }.flatMap {
                client.getMechanismsForAccount(account: $0).first?.mechanismUUID
            })
            // Between advanceCounter's read and its write, `coffer remove` runs.
            let racer = Racer { try await keyring(directory.url, ["remove", issuer, "--yes"]) }
            let claimed = try KeyringFaults.$beforeWrite.withValue({ write, attributes in
                if write == .store, attributes["uuid"] == uuid { await racer.startOnce() }
            }) {
                try client.advanceCounter(mechanismUUID: uuid)
            }
            #expect(claimed.counter == 0)
            let removed = try #require(await racer.result())
            #expect(removed.status == 0, "\(removed.stderr)")
            #expect(removed.stdout.contains("Removed"))
            let left = try await SecretService().search(["service": "org.coffer.authenticator.mechanism", "uuid": uuid], loadSecrets: false)
            #expect(left.isEmpty, "remove said Removed, yet the secret's item is back in the keyring")
            let again = try await keyring(directory.url, ["add", "-"], input: "otpauth://hotp/\(issuer):bob?secret=\(secret)&issuer=\(issuer)\n")
            #expect(again.status == 0, "the account can be added again: \(again.stderr)")
            _ = try await keyring(directory.url, ["remove", issuer, "--yes"])
        }
    }

    @Test("4: a mechanism item without its account is reported by list and doctor, and doctor --repair brings the account back")
    func orphanedMechanism() async throws {
        try await withKeyringAccount("Orphan") { directory, issuer in
            // What the race used to leave: the account's item gone, the mechanism's still there.
            let removed = try await SecretService().clear(["service": "org.coffer.authenticator.account", "issuer": issuer])
            #expect(removed == 1)
            let list = try await keyring(directory.url, ["list"])
            #expect(!list.stdout.contains(issuer))
            #expect(list.stderr.contains("1 stored record(s) cannot be read") && list.stderr.contains("no account owns it"), "\(list.stderr)")
            let doctor = try await keyring(directory.url, ["doctor"])
            #expect(doctor.status == 1)
            #expect(doctor.stdout.contains("FAIL  keyring accounts") && doctor.stdout.contains("coffer doctor --repair"), "\(doctor.stdout)")
            let refused = try await keyring(directory.url, ["add", "-"], input: "otpauth://hotp/\(issuer):bob?secret=\(secret)&issuer=\(issuer)\n")
            #expect(refused.status == 1, "adding it again is refused while the mechanism is there")
            let repaired = try await keyring(directory.url, ["doctor", "--repair"])
            #expect(repaired.stdout.contains("added back 1 account(s)") && repaired.stdout.contains(issuer), "\(repaired.stdout)")
            #expect(try await keyring(directory.url, ["list"]).stdout.contains(issuer))
            #expect(try await keyring(directory.url, ["code", issuer, "--raw"]).stdout == (try hotp(0)) + "\n", "the secret was kept")
            #expect(try await keyring(directory.url, ["remove", issuer, "--yes"]).status == 0)
            #expect(try await SecretService().search(["service": "org.coffer.authenticator.mechanism", "issuer": issuer]).isEmpty)

            // An orphan that does not open (junk under a mechanism's attributes) gets no account
            // made up from its attributes (review finding 8); it stays reported.
            let junk = ["service": "org.coffer.authenticator.mechanism", "uuid": "junk-\(issuer)", "issuer": "Junk\(issuer)",
                        "accountName": "alice", "type": "totp"]
            try await SecretService().store(Data("not sealed".utf8), attributes: junk, label: "junk", contentType: "application/octet-stream")
            let notRepaired = try await keyring(directory.url, ["doctor", "--repair"])
            #expect(!notRepaired.stdout.contains("added back"), "\(notRepaired.stdout)")
            #expect(notRepaired.stdout.contains("FAIL  keyring accounts"), "\(notRepaired.stdout)")
            #expect(!(try await keyring(directory.url, ["list"]).stdout.contains("Junk\(issuer)")))
            #expect(try await SecretService().search(["service": "org.coffer.authenticator.account", "issuer": "Junk\(issuer)"]).isEmpty)
            try await SecretService().clear(junk)
        }
    }

    @Test("4: a rename racing a lock keeps both (one read-compare-write under the lock)")
    func renameRacingLock() async throws {
        try await withKeyringAccount("Name") { directory, issuer in
            let client = try KeychainStorageClient.make(logger: Logger(label: "fifth-round"))
            let account = try #require(client.getAllAccounts().first { $0.issuer == issuer })
            // Between the lock's read and its write, `coffer rename` runs.
            let racer = Racer { try await keyring(directory.url, ["rename", issuer, "--issuer", "Renamed \(issuer)"]) }
            try KeyringFaults.$beforeWrite.withValue({ write, attributes in
                if write == .store, attributes["service"] == "org.coffer.authenticator.account" { await racer.startOnce() }
            }) {
                try AuthenticatorClient(storage: client).lock(account, policy: "deviceTampering")
            }
            let renamed = try #require(await racer.result())
            #expect(renamed.status == 0, "\(renamed.stderr)")
            let stored = try #require(client.getAccount(accountIdentifier: account.identifier))
            #expect(stored.isLocked && stored.lockingPolicy == "deviceTampering", "the lock survived the rename")
            #expect(stored.displayIssuer == "Renamed \(issuer)", "the rename survived the lock")
            _ = try await keyring(directory.url, ["remove", issuer, "--yes"])
        }
    }

    /// Holds the lock file `$1` from another process until `$SCRATCH/release-$2` appears, as a
    /// shell of the user in the middle of a read-compare-write would (bash, for ``PrivateSession``).
    static let holdLock = """
        hold() { flock "$1" -c "touch '$SCRATCH/held-$2'; while [ ! -e '$SCRATCH/release-$2' ]; do sleep 0.05; done" & \
                 while [ ! -e "$SCRATCH/held-$2" ]; do sleep 0.05; done; }
        mkdir -p "$SCRATCH/run" "$SCRATCH/home2" "$SCRATCH/data" "$SCRATCH/cwd"
        other() { (cd "$SCRATCH/cwd" && XDG_RUNTIME_DIR="$SCRATCH/run" HOME="$SCRATCH/home2" XDG_DATA_HOME="$SCRATCH/data" "$@"); }

        """

    @Test("2: the lock is the same file for a shell with another XDG_RUNTIME_DIR, HOME, XDG_DATA_HOME and working directory",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "needs flock(1) from util-linux"))
    func lockIgnoresEnvironment() async throws {
        // In a session of its own: the lock held here holds up no other test.
        let result = try await PrivateSession.run(Self.holdLock + """
            export COFFER_HOME="$SCRATCH/coffer" COFFER_BACKEND=keychain
            printf 'otpauth://hotp/Env:bob?secret=\(secret)&issuer=Env&counter=0\\n' | "$COFFER" add - > /dev/null || exit 90
            lock=$("$COFFER" doctor | sed -n 's/^ok    keyring lock: //p')
            echo "lock $lock"
            hold "$lock" code
            other timeout 3 "$COFFER" code env --raw; echo "code while held: $?"
            touch "$SCRATCH/release-code"; wait
            other "$COFFER" code env --raw; echo "code after: $?"
            keys="${lock%/*}/keys@${lock##*@}"
            hold "$keys" keys
            other timeout 3 "$STRESS" keyring-create-key org.coffer.tests.keylock; echo "key while held: $?"
            touch "$SCRATCH/release-keys"; wait
            other "$STRESS" keyring-create-key org.coffer.tests.keylock; echo "key after: $?"
            """, keyring: true)
        let home = try #require(getpwuid(geteuid())?.pointee.pw_dir.map { String(cString: $0) })
        #expect(result.stdout.contains("lock \(home)/.local/share/coffer/locks/org.coffer.authenticator@"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("code while held: 124"), "a shell with another environment issued a code without the lock: \(result.stdout)")
        #expect(result.stdout.contains("\(try hotp(0))\ncode after: 0"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("key while held: 124"), "a key was made in the keyring without the key store's lock: \(result.stdout)")
        #expect(result.stdout.contains("key after: 0"), "\(result.stdout) \(result.stderr)")
    }

    @Test("2 (review): one bus listening on two addresses is one keyring, so one lock; codes through both are all distinct")
    func busWithTwoAddresses() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // The test session's configuration, listening on two sockets instead of one.
        let standard = try String(contentsOf: PrivateSession.root.appendingPathComponent("scripts/dbus-session.conf"), encoding: .utf8)
        let configuration = directory.appending("two-addresses.conf")
        try Data(standard.replacingOccurrences(of: "<listen>unix:tmpdir=/tmp</listen>", with: """
            <listen>unix:path=\(directory.appending("busA").path)</listen><listen>unix:path=\(directory.appending("busB").path)</listen>
            """).utf8).write(to: configuration)
        let perAddress = max(5, Self.codesPerProcess)
        let result = try await PrivateSession.run("""
            export COFFER_HOME="$SCRATCH/coffer" COFFER_BACKEND=keychain
            printf 'otpauth://hotp/Two:bob?secret=\(secret)&issuer=Two&counter=0\\n' | "$COFFER" add - > /dev/null || exit 90
            for bus in busA busB; do
              echo "$bus $(DBUS_SESSION_BUS_ADDRESS="unix:path=\(directory.url.path)/$bus" "$COFFER" doctor | sed -n 's/^ok    keyring lock: //p')"
            done
            for bus in busA busB; do
              (for i in $(seq \(perAddress)); do DBUS_SESSION_BUS_ADDRESS="unix:path=\(directory.url.path)/$bus" "$COFFER" code two --raw; done \
                > "$SCRATCH/codes-$bus") &
            done
            wait
            echo "codes $(cat "$SCRATCH"/codes-* | wc -l) distinct $(sort -u "$SCRATCH"/codes-* | wc -l)"
            """, keyring: true, configuration: configuration, deadline: .seconds(180))
        let locks = result.stdout.split(separator: "\n").filter { $0.hasPrefix("bus") }.map { $0.split(separator: " ").last.map(String.init) ?? "" }
        #expect(locks.count == 2 && !locks[0].isEmpty && locks[0] == locks[1], "one lock through both addresses: \(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("codes \(2 * perAddress) distinct \(2 * perAddress)"), "\(result.stdout) \(result.stderr)")
    }

    @Test("2: four shells of one user with four environments, issuing HOTP codes at once: every code distinct")
    func shellsWithOtherEnvironments() async throws {
        try await withKeyringAccount("Shells") { directory, issuer in
            let perProcess = Self.codesPerProcess
            let codes = try await withThrowingTaskGroup(of: [String].self) { group in
                for shell in 0..<4 {
                    let runtime = directory.appending("run\(shell)")
                    try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
                    group.addTask {
                        var mine: [String] = []
                        for _ in 0..<perProcess {
                            let result = try await keyring(directory.url, ["code", issuer, "--raw"], environment: ["XDG_RUNTIME_DIR": runtime.path])
                            #expect(result.status == 0, "\(result.stderr)")
                            mine.append(result.stdout)
                        }
                        return mine
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(Set(codes).count == codes.count, "no code twice: \(codes.count - Set(codes).count) repeated")
            let expected = Set(try (0..<UInt64(4 * perProcess)).map { try hotp($0) + "\n" })
            #expect(Set(codes) == expected)
            _ = try await keyring(directory.url, ["remove", issuer, "--yes"])
            ReliabilityReport.record("R10", "4 shells of one user with 4 XDG_RUNTIME_DIRs issuing HOTP codes from the keyring",
                                     tried: "4 × \(perProcess) codes", outcome: "\(Set(codes).count) distinct of \(codes.count)")
        }
    }
}

/// Another process started at most once, at a moment a test chooses, and waited for with a
/// deadline, so a test can tell "it ran inside the window" from "it waited for the lock".
final class Racer: Sendable {
    private let body: @Sendable () async throws -> CofferProcess.Result
    private let task = Mutex<Task<CofferProcess.Result, any Error>?>(nil)

    init(_ body: @escaping @Sendable () async throws -> CofferProcess.Result) {
        self.body = body
    }

    /// Starts the process (the first call only) and gives it up to 3 s to finish.
    func startOnce() async {
        let started: Bool = task.withLock { task in
            guard task == nil else { return false }
            task = Task.detached { [body] in try await body() }
            return true
        }
        if started { _ = await result(within: .seconds(3)) }
    }

    /// The process's result once it has finished, or `nil` when it has not within `limit`.
    func result(within limit: Duration) async -> CofferProcess.Result? {
        let clock = ContinuousClock(), deadline = clock.now + limit
        let box = Mutex<CofferProcess.Result?>(nil)
        guard let task = task.withLock({ $0 }) else { return nil }
        let waiter = Task.detached { if let result = try? await task.value { box.withLock { $0 = result } } }
        while clock.now < deadline {
            if let result = box.withLock({ $0 }) { return result }
            try? await Task.sleep(for: .milliseconds(20))
        }
        waiter.cancel()
        return box.withLock { $0 }
    }

    /// The process's result, waiting as long as it takes; `nil` when it was never started.
    func result() async -> CofferProcess.Result? {
        guard let task = task.withLock({ $0 }) else { return nil }
        return try? await task.value
    }
}
