import Foundation
import TestSupport
import CofferStorage
import Testing

@Suite("The coffer tool, run as a process")
struct CofferToolTests {
    @Test("store put/get/delete keeps a secret across runs, encrypted on disk")
    func storeRoundTrip() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = CofferProcess(dataDirectory: directory.url)
        #expect(try await coffer.run(["store", "put", "greeting", "Hello from Coffer"]).status == 0)
        let get = try await coffer.run(["store", "get", "greeting"])
        #expect(get.status == 0)
        #expect(get.stdout == "Hello from Coffer\n")
        let file = try Data(contentsOf: directory.appending("store/greeting"))
        #expect(file.range(of: Data("Hello".utf8)) == nil)
        #expect(try await coffer.run(["store", "list"]).stdout == "greeting\n")
        #expect(try await coffer.run(["store", "delete", "greeting"]).status == 0)
        let missing = try await coffer.run(["store", "get", "greeting"])
        #expect(missing.status == 2, "nothing matched")
        #expect(missing.stderr.hasPrefix("coffer: nothing is stored under 'greeting'"))
    }

    @Test("put reads the value from standard input when it is not an argument")
    func storeFromStandardInput() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = CofferProcess(dataDirectory: directory.url)
        #expect(try await coffer.run(["store", "put", "token"], input: "from stdin\n").status == 0)
        #expect(try await coffer.run(["store", "get", "token"]).stdout == "from stdin\n")
    }

    @Test("the tool's store is readable by the library with the documented layout")
    func libraryReadsToolStore() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await CofferProcess(dataDirectory: directory.url).run(["store", "put", "shared", "value"])
        let storage = EncryptedFileStorage<String>(
            fileName: "shared", keyAlias: "org.coffer.store", directory: directory.appending("store"),
            keyStore: FileKeyStore(directory: directory.appending("keys")))
        #expect(try await storage.get() == "value")
    }

    @Test("rotate-key: old values still open, a new put uses the new key")
    func rotateKey() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = CofferProcess(dataDirectory: directory.url)
        try await coffer.run(["store", "put", "a", "one"])
        #expect(try await coffer.run(["store", "rotate-key"]).stdout == "new key id: 2\n")
        #expect(try await coffer.run(["store", "get", "a"]).stdout == "one\n")
        try await coffer.run(["store", "put", "a", "two"])
        #expect(try AESGCMEncryptor.keyID(of: Data(contentsOf: directory.appending("store/a"))) == 2)
    }

    @Test("errors are one line on stderr with a non-zero status, and the file is left alone")
    func errorsAreOneLine() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = CofferProcess(dataDirectory: directory.url)
        try await coffer.run(["store", "put", "secret", "top-secret-value"])
        let file = directory.appending("store/secret")
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count - 1] ^= 1
        try bytes.write(to: file)
        let result = try await coffer.run(["store", "get", "secret"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("coffer: Could not decrypt"))
        #expect(result.stderr.filter { $0 == "\n" }.count == 1)
        #expect(!result.stderr.contains("top-secret"))
        #expect(try Data(contentsOf: file) == bytes)

        let bad = try await coffer.run(["store", "put", "../escape", "x"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("cannot be a store name"))
        #expect(!bad.stderr.contains("directory"), "no library advice (`pass the folder as directory`) in the tool")
    }

    /// R7: a store, an authenticator database with an account, and their keys, created under
    /// umask 000; then every file and directory under the data directory is checked.
    @Test("every file Coffer creates is 0600 and every directory 0700, even under umask 000")
    func permissionsUnderPermissiveUmask() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let home = directory.appending("home")
        let script = """
            umask 000
            "$0" store put item value || exit 1
            "$0" add 'otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example' || exit 1
            "$0" code example >/dev/null
            """
        let result = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/sh"), ["-c", script, try CofferProcess.executable.path],
            environment: ["COFFER_HOME": home.path], removing: ["DBUS_SESSION_BUS_ADDRESS"])
        #expect(result.status == 0, "\(result.stderr)")
        let (paths, wrong) = try modes(under: home)
        #expect(wrong.isEmpty, "not 0600/0700: \(wrong)")
        for expected in ["store/item", "keys", "authenticator.sqlite"] {
            #expect(paths.contains(expected), "\(expected) was created: \(paths)")
        }
        let checked = paths
        ReliabilityReport.record("R7", "files and directories created under umask 000 (coffer store, add, code)",
                                 tried: "\(checked.count) paths", outcome: wrong.isEmpty ? "all 0600 / 0700" : "WRONG: \(wrong)")
    }

    /// Every path under `home` (relative, `""` for `home` itself), and those that are not 0600
    /// (files) or 0700 (directories).
    private func modes(under home: URL) throws -> (paths: [String], wrong: [String]) {
        var paths = [""]
        let walker = try #require(FileManager.default.enumerator(atPath: home.path))
        while let relative = walker.nextObject() as? String { paths.append(relative) }
        let wrong = try paths.filter { relative in
            let url = relative.isEmpty ? home : home.appendingPathComponent(relative)
            let isDirectory = (try url.resourceValues(forKeys: [.isDirectoryKey])).isDirectory == true
            return try permissions(of: url) != (isDirectory ? 0o700 : 0o600)
        }
        return (paths, wrong)
    }

    /// The other side of the umask: one that takes the owner's own bits away (0277 would make a
    /// new file 0400 and a directory 0500). Run as an unprivileged user, since root opens a 0400
    /// file for writing anyway: a lock file left 0400 refused the second `store put` (EACCES).
    /// Every file is still 0600 and every directory 0700, and everything opens again.
    @Test("under umask 0277, as an unprivileged user: files 0600, directories 0700, and every later command opens them",
          .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
    func permissionsUnderStrictUmask() async throws {
        let tool = try SecondUser.tool().path
        let script = """
            unset DBUS_SESSION_BUS_ADDRESS XDG_DATA_HOME XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR
            export HOME=/tmp
            home=$(mktemp -d /tmp/coffer-umask.XXXXXX)/home
            echo "home=$home"
            umask 0277
            export COFFER_HOME="$home"
            '\(tool)' store put item value || exit 1
            '\(tool)' store put item second || exit 1
            '\(tool)' add 'otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example' || exit 1
            '\(tool)' code example >/dev/null || exit 1
            '\(tool)' store get item
            """
        let result = try await SecondUser.run(script)
        let line = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("home=") })
        let home = URL(fileURLWithPath: String(line.dropFirst("home=".count)))
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try #require(result.status == 0, "as \(SecondUser.name): \(result.stderr)")
        #expect(result.stdout.hasSuffix("second\n"), "\(result.stdout)")
        let (paths, wrong) = try modes(under: home)
        #expect(wrong.isEmpty, "not 0600/0700: \(wrong)")
        for expected in ["store/item", "store/.item.lock", "keys", "authenticator.sqlite"] {
            #expect(paths.contains(expected), "\(expected) was created: \(paths)")
        }
    }

    /// R2 for a single value: two processes write and two read, each doing
    /// COFFER_PROCESS_OPERATIONS operations (500 unless set).
    @Test("processes writing and reading one file concurrently never see it torn; the last writer wins")
    func concurrentProcesses() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await EncryptedFileStorage<String>(fileName: "race", directory: directory.url).save(item: "initial")
        let stress = try CofferProcess.builtExecutable("coffer-stress")
        let operations = ProcessInfo.processInfo.environment["COFFER_PROCESS_OPERATIONS"] ?? "500"
        let jobs = [["write", "0", operations], ["write", "1", operations], ["read", operations], ["read", operations]]
        try await withThrowingTaskGroup(of: (String, CofferProcess.Result).self) { group in
            for job in jobs {
                group.addTask {
                    let arguments = [job[0], directory.url.path, "race"] + job.dropFirst()
                    return (job.joined(separator: " "), try await CofferProcess.run(executable: stress, arguments))
                }
            }
            for try await (job, result) in group {
                #expect(result.status == 0, "\(job): \(result.stderr)")
            }
        }
        let value = try await EncryptedFileStorage<String>(fileName: "race", directory: directory.url).get()
        // coffer-stress writes "w<writer>r<round>:" then the writer's digit, 8,000 + round % 97 times.
        let last = (Int(operations) ?? 0) - 1
        let lastValues = (0..<2).map { "w\($0)r\(last):" + String(repeating: "\($0)", count: 8_000 + last % 97) }
        #expect(value.map(lastValues.contains) == true, "the file holds one writer's last value")
        ReliabilityReport.record("R2", "2 processes writing one encrypted file while 2 read it", tried: "4 × \(operations) operations",
                                 outcome: value.map(lastValues.contains) == true ? "no torn or failed read; a writer's last value remains (last writer wins)" : "WRONG final value")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!names.contains { $0.hasSuffix(".tmp") }, "no temporary files are left behind")
    }
}
