import CofferAuthenticator
import Foundation
import TestSupport
import Testing

/// The fifth round (issue 20, item 6): what a crash, another process of the same user, or a
/// search path with a relative or writable entry can get out of the `coffer` tool.
@Suite("Fifth round: no core file, a crash exits, programs and libraries only from trusted directories")
struct ProcessHardeningAttackTests {
    static let uri = "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example\n"

    @Test("6: another process of the same user reads no environ or descriptors, and a crash with core files allowed writes none",
          .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
    func noCoreNoPeeking() async throws {
        let directory = try await SecondUser.plantDirectory(mode: "700")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coffer = try SecondUser.tool().path
        // As the second user, with core files allowed and the working directory writable: the
        // attack is a sibling process of the same user, and a crash.
        let result = try await SecondUser.run("""
            cd '\(directory.path)' || exit 99
            ulimit -c unlimited
            export COFFER_HOME='\(directory.path)/home'
            printf '%s' '\(Self.uri)' | '\(coffer)' add - >/dev/null || exit 98
            '\(coffer)' code --watch > watch.out 2> watch.err & pid=$!
            sleep 1.5
            cat /proc/$pid/environ > /dev/null 2>&1 && echo "environ readable"
            ls /proc/$pid/fd > /dev/null 2>&1 && echo "descriptors listable"
            grep -q '^Max core file size *0 *0 ' /proc/$pid/limits && echo "core limit 0"
            kill -SEGV $pid; wait $pid; echo "status $?"
            sleep 0.5
            ls core* 2>/dev/null | head -1 | sed 's/^/dumped: /'
            cat watch.err
            """, environment: ["DBUS_SESSION_BUS_ADDRESS": ""])
        #expect(!result.stdout.contains("environ readable"), "\(result.stdout)")
        #expect(!result.stdout.contains("descriptors listable"), "\(result.stdout)")
        #expect(result.stdout.contains("core limit 0"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("status 139"), "\(result.stdout)")
        #expect(!result.stdout.contains("dumped: "), "\(result.stdout)")
        #expect(result.stdout.contains("coffer: crashed (signal 11); no core file was written"), "\(result.stdout)")
    }

    @Test("6: a crash under coffer code --watch at a terminal exits at once, the cursor shown again, instead of waiting at a prompt",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) from util-linux for a pseudo-terminal"))
    func crashUnderWatchExits() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = try SecondUser.tool().path
        let home = directory.appending("home").path
        let added = try await CofferProcess.run(executable: try CofferProcess.executable, ["add", "-"], input: Self.uri,
                                                environment: ["COFFER_HOME": home], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
        try #require(added.status == 0, "\(added.stderr)")
        let inner = directory.appending("inner.sh")
        try Data("""
            '\(coffer)' code --watch & pid=$!
            sleep 1.5
            kill -ABRT $pid; wait $pid; echo "status $?" > '\(directory.appending("status").path)'
            """.utf8).write(to: inner)
        let result = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", "bash \(inner.path)", "/dev/null"],
            environment: ["COFFER_HOME": home], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"], deadline: .seconds(30))
        #expect(!result.timedOut, "the crashed tool waited instead of exiting")
        let status = try String(contentsOf: directory.appending("status"), encoding: .utf8)
        #expect(status == "status 134\n")
        #expect(result.stdout.contains("\u{1B}[?25h"), "the cursor is shown again")
        #expect(result.stdout.contains("coffer: crashed (signal 6)"))
    }

    @Test("6: helper programs are never taken from a relative, empty or writable PATH entry")
    func untrustedPathEntries() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home").path
        try #require(try await CofferProcess.run(executable: try CofferProcess.executable, ["add", "-"], input: Self.uri,
                                                 environment: ["COFFER_HOME": home], removing: ["DBUS_SESSION_BUS_ADDRESS"]).status == 0)
        // A fake xclip in the working directory (PATH "" and "bin"), and one in a directory
        // anyone can write to; each leaves a mark if it runs.
        let writable = directory.appending("open")
        for folder in [directory.url, directory.appending("bin"), writable] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try writeExecutable("#!/bin/sh\ntouch '\(folder.path)/ran'\ncat > /dev/null\n", at: folder.appendingPathComponent("xclip"))
        }
        chmod(writable.path, 0o777)
        let copied = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/sh"),
            ["-c", "cd '\(directory.url.path)' && exec '\(try CofferProcess.executable.path)' code example --copy"],
            environment: ["COFFER_HOME": home, "DISPLAY": ":97", "PATH": ":bin:\(writable.path):/usr/bin:/bin"],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "WAYLAND_DISPLAY"])
        for folder in [directory.url, directory.appending("bin"), writable] {
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("ran").path),
                    "the xclip in \(folder.lastPathComponent) ran: \(copied.stderr)")
        }
    }

    @Test("6 (review): the clipboard's clearing process is this binary, never a coffer found by name in the working directory")
    func clearingProcessIsThisBinary() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home").path
        try #require(try await CofferProcess.run(executable: try CofferProcess.executable, ["add", "-"], input: Self.uri,
                                                 environment: ["COFFER_HOME": home], removing: ["DBUS_SESSION_BUS_ADDRESS"]).status == 0)
        // A clipboard tool in a trusted directory; coffer itself reached by name through a
        // directory others can write to (so not trusted to find it again); a `coffer` planted
        // in the working directory.
        let tools = directory.appending("tools"), open = directory.appending("open"), plant = directory.appending("plant")
        for folder in [tools, open, plant] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        chmod(open.path, 0o777)
        try writeExecutable("#!/bin/sh\ncat > /dev/null\n", at: tools.appendingPathComponent("xclip"))
        try FileManager.default.createSymbolicLink(at: open.appendingPathComponent("coffer"), withDestinationURL: try CofferProcess.executable)
        let marker = directory.appending("planted-ran").path
        try writeExecutable("#!/bin/sh\ntouch '\(marker)'\n", at: plant.appendingPathComponent("coffer"))
        let copied = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/sh"), ["-c", "cd '\(plant.path)' && exec coffer code example --copy"],
            environment: ["COFFER_HOME": home, "DISPLAY": ":97", "PATH": "\(tools.path):\(open.path):/usr/bin:/bin",
                          "COFFER_CLIPBOARD_CLEAR_SECONDS": "1"],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "WAYLAND_DISPLAY"])
        #expect(copied.status == 0 && copied.stdout.contains("Copied the code"), "\(copied.stdout) \(copied.stderr)")
        try await Task.sleep(for: .seconds(2))
        #expect(!FileManager.default.fileExists(atPath: marker), "the planted coffer ran")
    }

    @Test("6: libraries are never loaded from a relative, empty or writable LD_LIBRARY_PATH entry",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gcc"), "needs gcc to build the planted library"))
    func untrustedLibraryEntries() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // A libsecret that leaves a mark when it is loaded, planted in the working directory and
        // in a directory anyone can write to.
        let source = directory.appending("planted.c")
        let mark = directory.appending("loaded").path
        try Data("""
            #include <stdio.h>
            __attribute__((constructor)) static void planted(void) { FILE *f = fopen("\(mark)", "w"); if (f) fclose(f); }
            """.utf8).write(to: source)
        let writable = directory.appending("open")
        try FileManager.default.createDirectory(at: writable, withIntermediateDirectories: true)
        chmod(writable.path, 0o777)
        for folder in [directory.url, writable] {
            let built = try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/gcc"),
                                                    ["-shared", "-fPIC", "-o", folder.appendingPathComponent("libsecret-1.so.0").path, source.path])
            try #require(built.status == 0, "\(built.stderr)")
        }
        for search in [":", "relative:/usr/lib", writable.path] {
            let result = try await CofferProcess.run(
                executable: URL(fileURLWithPath: "/bin/sh"),
                ["-c", "cd '\(directory.url.path)' && exec '\(try CofferProcess.executable.path)' doctor"],
                environment: ["COFFER_HOME": directory.appending("home").path, "LD_LIBRARY_PATH": search])
            #expect(!FileManager.default.fileExists(atPath: mark), "LD_LIBRARY_PATH=\(search) loaded the planted library: \(result.stdout)")
            // What the loader linked before the tool started came from there too: doctor says so.
            #expect(result.stdout.contains("FAIL  library search path: LD_LIBRARY_PATH has entries"), "\(search): \(result.stdout)")
            try? FileManager.default.removeItem(atPath: mark)
        }
        // A library named by COFFER_LIBSECRET must be an absolute path: a bare name would be
        // looked up in the search path.
        let bare = try await CofferProcess.run(executable: try CofferProcess.executable, ["doctor"],
                                               environment: ["COFFER_HOME": directory.appending("home").path, "COFFER_LIBSECRET": "libsecret-1.so.0"])
        #expect(bare.stdout.contains("COFFER_LIBSECRET must be an absolute path"), "\(bare.stdout)")
        // The variable itself still works for a directory of your own.
        let own = directory.appending("own")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: directory.appending("libsecret-1.so.0"), to: own.appendingPathComponent("libsecret-1.so.0"))
        _ = try await CofferProcess.run(executable: try CofferProcess.executable, ["doctor"],
                                        environment: ["COFFER_HOME": directory.appending("home").path, "LD_LIBRARY_PATH": own.path])
        #expect(FileManager.default.fileExists(atPath: mark), "a trusted directory of your own is still searched")
    }
}
