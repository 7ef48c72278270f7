import Foundation
import Synchronization

/// Another local user, for attacks that need one (R8): an unprivileged account made with
/// `useradd`, whose commands run through `setpriv`. Only root can make and become it, and CI
/// runs as root; elsewhere the tests that need it are skipped with ``skipReason``.
public enum SecondUser {
    /// The account's name.
    public static let name = "coffer-attacker"

    /// Its uid and gid, creating the account on first use; `nil` when that is impossible.
    public static let identity: (uid: UInt32, gid: UInt32)? = {
        guard geteuid() == 0 else { return nil }
        if let found = lookUp() { return found }
        _ = try? runBlocking("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name])
        return lookUp()
    }()

    /// Why attacks that need a second user are skipped, or `nil` when they run.
    public static var skipReason: String? {
        guard geteuid() == 0 else { return "a second local user can only be made and become as root (run the suite as root, as CI does)" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return "setpriv (util-linux) is not installed" }
        return identity == nil ? "useradd could not create the user \(name)" : nil
    }

    /// Whether the second user is available.
    public static var available: Bool { skipReason == nil }

    /// Runs `/bin/sh -c script` as the second user (no supplementary groups), with `umask 000` so
    /// whatever it creates is as open as it asks.
    public static func run(_ script: String, environment: [String: String] = [:]) async throws -> CofferProcess.Result {
        guard let identity else { throw CocoaError(.featureUnsupported) }
        return try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid=\(identity.uid)", "--regid=\(identity.gid)", "--clear-groups", "--", "/bin/sh", "-c", "umask 000; " + script],
            environment: environment, deadline: .seconds(60))
    }

    /// A copy of the built `coffer` (and `coffer-session`) the second user can run, wherever the clone sits: the build
    /// folder may be under a directory only we can enter (a home directory, `mktemp -d`), so the
    /// binary is copied once per run into a root-owned 0755 directory in `/tmp`.
    public static func tool() throws -> URL {
        try toolCopy.get()
    }

    private static let toolCopy: Result<URL, any Error> = Result {
        let built = try CofferProcess.executable
        let directory = URL(fileURLWithPath: "/tmp/coffer-second-user-tool-\(getpid())-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o755])
        let copy = directory.appendingPathComponent("coffer")
        try FileManager.default.copyItem(at: built, to: copy)
        // And coffer-session, which coffer runs for its session commands, beside it.
        let helper = directory.appendingPathComponent("coffer-session")
        try FileManager.default.copyItem(at: try CofferProcess.builtExecutable("coffer-session"), to: helper)
        guard chmod(copy.path, 0o755) == 0, chmod(helper.path, 0o755) == 0 else { throw CocoaError(.fileWriteNoPermission) }
        atexit { _ = try? FileManager.default.removeItem(at: SecondUser.copiedToolDirectory) }
        copiedToolDirectoryBox.withLock { $0 = directory }
        return copy
    }

    private static let copiedToolDirectoryBox = Mutex<URL?>(nil)
    fileprivate static var copiedToolDirectory: URL {
        copiedToolDirectoryBox.withLock { $0 } ?? URL(fileURLWithPath: "/nonexistent")
    }

    /// A fresh directory in the shared, sticky temporary folder, made by the second user with
    /// `mode`: a directory planted where the victim will look.
    public static func plantDirectory(mode: String = "777") async throws -> URL {
        let url = URL(fileURLWithPath: "/tmp/coffer-r8-\(UUID().uuidString.prefix(8))", isDirectory: true)
        let result = try await run("mkdir '\(url.path)' && chmod \(mode) '\(url.path)'")
        guard result.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: result.stderr]) }
        return url
    }

    private static func lookUp() -> (uid: UInt32, gid: UInt32)? {
        guard let entry = getpwnam(name) else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    private static func runBlocking(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
