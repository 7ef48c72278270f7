import Foundation
import TestSupport
import Testing

/// Issue 34's review (helper-22): an environment that gives a name twice, which `execve` allows
/// and a shell never makes. The loader and `ProcessInfo` take the last value, `getenv` the first.
/// And the loader splits `LD_LIBRARY_PATH` at semicolons as well as colons.
@Suite("Issue 34's review: a variable given twice, a library search path split at semicolons",
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gcc"), "needs gcc to build the planted library"))
struct RepeatedVariableAttackTests {
    static let uri = "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example\n"

    /// A directory with a libqrencode that leaves a mark when it is loaded (`coffer show --qr`
    /// loads it), in a folder anyone can write to, and a program that starts another with an
    /// environment given as a list (`execenv N NAME=VALUE… PROGRAM ARGUMENT…`).
    struct Plant {
        let directory = TemporaryDirectory()
        var writable: URL { directory.appending("open") }
        var mark: String { directory.appending("loaded").path }
        var execenv: URL { directory.appending("execenv") }
        var home: String { directory.appending("home").path }

        init() async throws {
            try FileManager.default.createDirectory(at: writable, withIntermediateDirectories: true)
            chmod(writable.path, 0o777)
            let library = directory.appending("planted.c"), launcher = directory.appending("execenv.c")
            try Data("""
                #include <stdio.h>
                __attribute__((constructor)) static void planted(void) { FILE *f = fopen("\(mark)", "w"); if (f) fclose(f); }
                """.utf8).write(to: library)
            try Data("""
                #include <stdlib.h>
                #include <unistd.h>
                int main(int argc, char **argv) {
                    int count = atoi(argv[1]);
                    char **environment = calloc(count + 1, sizeof *environment);
                    for (int i = 0; i < count; i++) environment[i] = argv[2 + i];
                    execve(argv[2 + count], argv + 2 + count, environment);
                    return 127;
                }
                """.utf8).write(to: launcher)
            for (arguments, what) in [(["-shared", "-fPIC", "-o", writable.appendingPathComponent("libqrencode.so.4").path, library.path], "library"),
                                      (["-o", execenv.path, launcher.path], "launcher")] {
                let built = try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/gcc"), arguments)
                try #require(built.status == 0, "the \(what): \(built.stderr)")
            }
            let added = try await CofferProcess.run(executable: try CofferProcess.executable, ["add", "-"], input: RepeatedVariableAttackTests.uri,
                                                    environment: ["COFFER_HOME": home], removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
            try #require(added.status == 0, "\(added.stderr)")
        }

        /// `coffer` run with exactly `environment` (and a PATH), names given twice kept.
        func coffer(_ arguments: [String], input: String? = nil, environment: [String]) async throws -> CofferProcess.Result {
            let entries = ["PATH=/usr/local/bin:/usr/bin:/bin"] + environment
            return try await CofferProcess.run(executable: execenv, ["\(entries.count)"] + entries + [try CofferProcess.executable.path] + arguments,
                                               input: input, deadline: .seconds(60))
        }
    }

    @Test("LD_LIBRARY_PATH given twice: the loader's value (the last) and every other one are judged; nothing loads from a writable folder, and no start loops")
    func searchPathGivenTwice() async throws {
        let plant = try await Plant()
        defer { plant.directory.remove() }
        let trusted = plant.directory.appending("trusted").path
        try FileManager.default.createDirectory(atPath: trusted, withIntermediateDirectories: true)
        let open = plant.writable.path
        for (first, last) in [(trusted, open), (trusted, "\(open):\(trusted)"), ("\(open):\(trusted)", open), (open, trusted)] {
            let result = try await plant.coffer(["show", "example", "--qr"],
                                                environment: ["COFFER_HOME=\(plant.home)", "LD_LIBRARY_PATH=\(first)", "LD_LIBRARY_PATH=\(last)"])
            #expect(!result.timedOut, "[\(first), \(last)]: the tool kept starting itself again")
            #expect(!FileManager.default.fileExists(atPath: plant.mark), "[\(first), \(last)] loaded the planted library")
            #expect(result.status == 0, "[\(first), \(last)]: \(result.stderr)")
            let doctor = try await plant.coffer(["doctor"], environment: ["COFFER_HOME=\(plant.home)", "LD_LIBRARY_PATH=\(first)", "LD_LIBRARY_PATH=\(last)"])
            #expect(doctor.stdout.contains("FAIL  library search path: LD_LIBRARY_PATH has entries"), "[\(first), \(last)]: \(doctor.stdout)")
            try? FileManager.default.removeItem(atPath: plant.mark)
        }
    }

    @Test("a semicolon splits LD_LIBRARY_PATH as it splits it for the loader: a writable folder behind one is dropped")
    func semicolonSeparates() async throws {
        let plant = try await Plant()
        defer { plant.directory.remove() }
        // A trusted directory whose name, read the loader's way, is two: "…/semi" and the writable one.
        let search = plant.directory.appending("semi").path + ";" + plant.writable.path
        try FileManager.default.createDirectory(atPath: search, withIntermediateDirectories: true)
        let result = try await plant.coffer(["show", "example", "--qr"], environment: ["COFFER_HOME=\(plant.home)", "LD_LIBRARY_PATH=\(search)"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: plant.mark), "the planted library behind a semicolon was loaded")
    }

    @Test("any other name given twice has one value for the tool and every program it starts: the last")
    func oneValuePerName() async throws {
        let plant = try await Plant()
        defer { plant.directory.remove() }
        // COFFER_HOME: the account lands where the last value says.
        let other = plant.directory.appending("other").path
        let added = try await plant.coffer(["add", "-"], input: Self.uri, environment: ["COFFER_HOME=\(plant.home)", "COFFER_HOME=\(other)"])
        #expect(added.status == 0, "the first COFFER_HOME, which holds the account already, was used: \(added.stderr)")
        let listed = try await plant.coffer(["list"], environment: ["COFFER_HOME=\(other)"])
        #expect(listed.stdout.contains("alice"), "\(listed.stdout) \(listed.stderr)")
        // DISPLAY: the clipboard tool that copies and the one the clearing process asks see one display.
        let tools = plant.directory.appending("tools")
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        let log = plant.directory.appending("displays").path
        try writeExecutable("#!/bin/sh\necho \"$DISPLAY\" >> '\(log)'\ncase \"$*\" in *-o*) printf '000000' ;; *) cat > /dev/null ;; esac\n",
                            at: tools.appendingPathComponent("xclip"))
        let copied = try await CofferProcess.run(
            executable: plant.execenv,
            ["5", "PATH=\(tools.path):/usr/bin:/bin", "COFFER_HOME=\(plant.home)", "DISPLAY=:71", "DISPLAY=:72", "COFFER_CLIPBOARD_CLEAR_SECONDS=1",
             try CofferProcess.executable.path, "code", "example", "--copy"])
        #expect(copied.status == 0, "\(copied.stderr)")
        try await Task.sleep(for: .seconds(3))
        let displays = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(displays.split(separator: "\n").count >= 2, "the clearing process did not ask the clipboard: \(displays)")
        #expect(Set(displays.split(separator: "\n")) == [":72"], "\(displays)")
    }
}
