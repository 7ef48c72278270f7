import Foundation
import TestSupport
import Testing

/// `coffer` hands its session commands to `coffer-session` (issue 34, P6): what a missing,
/// planted or writable `coffer-session` gets, and where it is looked for.
@Suite("coffer-session: found beside coffer's real path only, run only when trusted")
struct SessionHelperAttackTests {
    /// A directory holding a copy of the built `coffer` (and, unless `helper` is false, of
    /// `coffer-session`), laid out as `bin/` or installed as `bin/` + `libexec/coffer/`.
    private static func toolCopy(in directory: TemporaryDirectory, helper: Bool = true, installed: Bool = false) throws -> URL {
        let bin = directory.appending("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: try CofferProcess.executable, to: bin.appendingPathComponent("coffer"))
        if helper {
            let libexec = installed ? directory.appending("libexec/coffer") : bin
            try FileManager.default.createDirectory(at: libexec, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: try CofferProcess.builtExecutable("coffer-session"), to: libexec.appendingPathComponent("coffer-session"))
        }
        return bin.appendingPathComponent("coffer")
    }

    /// A script that leaves a mark when run, planted as `coffer-session` beside `coffer`; its
    /// path and the mark's.
    private static func plant(beside coffer: URL, in directory: TemporaryDirectory) throws -> (planted: URL, marker: String) {
        let marker = directory.appending("planted-ran").path
        let planted = coffer.deletingLastPathComponent().appendingPathComponent("coffer-session")
        try writeExecutable("#!/bin/sh\ntouch '\(marker)'\n", at: planted)
        return (planted, marker)
    }

    private static func sessions(_ coffer: URL, in directory: TemporaryDirectory, workingDirectory: URL? = nil,
                                 path: String = "/usr/bin:/bin") async throws -> CofferProcess.Result {
        let home = directory.appending("home").path
        guard let workingDirectory else {
            return try await CofferProcess.run(executable: coffer, ["sessions", "--json"], environment: ["COFFER_HOME": home, "PATH": path])
        }
        return try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/sh"),
                                           ["-c", "cd '\(workingDirectory.path)' && exec '\(coffer.path)' sessions --json"],
                                           environment: ["COFFER_HOME": home, "PATH": path])
    }

    @Test("coffer links no HTTP stack (libcurl, GnuTLS, Kerberos); coffer-session does")
    func cofferLinksNoHTTPStack() async throws {
        func needed(_ binary: URL) async throws -> String {
            try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/readelf"), ["-d", binary.path]).stdout
        }
        let coffer = try await needed(try CofferProcess.executable)
        let helper = try await needed(try CofferProcess.builtExecutable("coffer-session"))
        #expect(coffer.contains("libsqlite3") && !coffer.contains("libcurl"), "\(coffer)")
        #expect(helper.contains("libcurl"), "\(helper)")
    }

    @Test("a session command works through coffer, from the build directory and installed (libexec/coffer)")
    func handsOff() async throws {
        for installed in [false, true] {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let coffer = try Self.toolCopy(in: directory, installed: installed)
            let listed = try await Self.sessions(coffer, in: directory)
            #expect(listed.status == 0 && listed.stdout.filter { !$0.isWhitespace } == "[]", "\(listed.stdout) \(listed.stderr)")
            // The name check is coffer-session's, and so is the help.
            let badName = try await CofferProcess.run(executable: coffer, ["token", "../x"], environment: ["COFFER_HOME": directory.appending("home").path])
            #expect(badName.status == 64 && badName.stderr.contains("cannot name a session"), "\(badName.stderr)")
            let help = try await CofferProcess.run(executable: coffer, ["help", "login"])
            #expect(help.status == 0 && help.stdout.contains("--client-secret-file"), "\(help.stdout) \(help.stderr)")
        }
    }

    @Test("without coffer-session: a session command fails in one line that says what to do; other commands work")
    func missing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = try Self.toolCopy(in: directory, helper: false)
        let listed = try await Self.sessions(coffer, in: directory)
        #expect(listed.status == 1 && listed.stderr.contains("coffer-session, which does coffer's session commands, is not installed")
                && listed.stderr.contains("install coffer again"), "\(listed.stderr)")
        // doctor hands itself over only where there are sessions to check.
        let home = directory.appending("home")
        let doctor = try await CofferProcess.run(executable: coffer, ["doctor"], environment: ["COFFER_HOME": home.path],
                                                 removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(doctor.stdout.contains("data directory") && !doctor.stdout.contains("sessions"), "\(doctor.stdout) \(doctor.stderr)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent("sessions"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let withSessions = try await CofferProcess.run(executable: coffer, ["doctor"], environment: ["COFFER_HOME": home.path],
                                                       removing: ["DBUS_SESSION_BUS_ADDRESS"])
        // doctor is what one runs when the install is broken: every other check still runs.
        #expect(withSessions.status == 1 && withSessions.stdout.contains("data directory")
                && withSessions.stdout.contains("FAIL  sessions: cannot be checked: coffer-session"),
                "\(withSessions.stdout) \(withSessions.stderr)")
    }

    @Test("a coffer-session that is a link is refused, even to the real one: what runs is the file checked")
    func link() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = try Self.toolCopy(in: directory, helper: false)
        // The real coffer-session, root's, in a directory others can write to (where it could be
        // swapped between the check and the exec), reached through a link beside coffer.
        let elsewhere = directory.appending("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        #expect(chmod(elsewhere.path, 0o777) == 0)
        try FileManager.default.copyItem(at: try CofferProcess.builtExecutable("coffer-session"), to: elsewhere.appendingPathComponent("coffer-session"))
        try FileManager.default.createSymbolicLink(at: coffer.deletingLastPathComponent().appendingPathComponent("coffer-session"),
                                                   withDestinationURL: elsewhere.appendingPathComponent("coffer-session"))
        let listed = try await Self.sessions(coffer, in: directory)
        #expect(listed.status == 1 && listed.stderr.contains("it is a symbolic link"), "\(listed.stdout) \(listed.stderr)")
    }

    @Test("a first candidate that exists but cannot be used (a dangling link, a link to itself) is refused, not passed over")
    func noFallThrough() async throws {
        for dangling in [true, false] {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let coffer = try Self.toolCopy(in: directory, helper: false)
            let (_, marker) = try Self.plant(beside: coffer, in: directory)
            let libexec = directory.appending("libexec/coffer")
            try FileManager.default.createDirectory(at: libexec, withIntermediateDirectories: true)
            let first = libexec.appendingPathComponent("coffer-session")
            try FileManager.default.createSymbolicLink(atPath: first.path, withDestinationPath: dangling ? directory.appending("not-yet").path : "coffer-session")
            let listed = try await Self.sessions(coffer, in: directory)
            #expect(listed.status == 1 && listed.stderr.contains("Coffer will not run \(first.path)"), "\(listed.stderr)")
            #expect(!FileManager.default.fileExists(atPath: marker), "the second candidate ran")
        }
    }

    @Test("a coffer-session others can write to, or in a directory others can write to, is refused and never run")
    func writable() async throws {
        for openFile in [true, false] {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let coffer = try Self.toolCopy(in: directory, helper: false)
            let (planted, marker) = try Self.plant(beside: coffer, in: directory)
            #expect(chmod(openFile ? planted.path : coffer.deletingLastPathComponent().path, 0o777) == 0)
            let listed = try await Self.sessions(coffer, in: directory)
            #expect(listed.status == 1 && listed.stderr.contains("Coffer will not run \(planted.path)"), "\(listed.stderr)")
            #expect(!FileManager.default.fileExists(atPath: marker), "the writable coffer-session ran")
        }
    }

    @Test("a coffer-session another user owns is refused and never run",
          .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
    func otherOwner() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = try Self.toolCopy(in: directory, helper: false)
        let (planted, marker) = try Self.plant(beside: coffer, in: directory)
        let other = try #require(SecondUser.identity)
        #expect(chown(planted.path, other.uid, other.gid) == 0 && chmod(planted.path, 0o755) == 0)
        let listed = try await Self.sessions(coffer, in: directory)
        #expect(listed.status == 1 && listed.stderr.contains("Coffer will not run"), "\(listed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the other user's coffer-session ran")
    }

    @Test("coffer-session is found by coffer's real path: never by PATH, the working directory or a link's directory")
    func foundBesideTheRealBinary() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = try Self.toolCopy(in: directory, installed: true)
        let marker = directory.appending("planted-ran").path
        // Planted: beside a link to coffer, in the working directory, in a PATH entry, and in
        // bin/ (where the installed layout's libexec/coffer comes first).
        let links = directory.appending("links"), work = directory.appending("work"), tools = directory.appending("tools")
        for folder in [links, work, tools] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try writeExecutable("#!/bin/sh\ntouch '\(marker)'\n", at: folder.appendingPathComponent("coffer-session"))
        }
        try writeExecutable("#!/bin/sh\ntouch '\(marker)'\n", at: coffer.deletingLastPathComponent().appendingPathComponent("coffer-session"))
        let link = links.appendingPathComponent("coffer")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: coffer)
        let listed = try await Self.sessions(link, in: directory, workingDirectory: work, path: "\(tools.path):/usr/bin:/bin")
        #expect(listed.status == 0 && listed.stdout.filter { !$0.isWhitespace } == "[]", "\(listed.stdout) \(listed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker), "a planted coffer-session ran")
    }
}
