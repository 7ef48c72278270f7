import CofferStorage
import Foundation
import TestSupport
import Testing

/// Ping's default storage on a desktop and on a server: the keyring where there is one, an
/// encrypted file where there is not, and the file for good once it exists.
@Suite("PlatformDefaultStorage", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct PlatformDefaultStorageTests {
    static func run(_ directory: URL, account: String, keyring: Bool) async throws -> CofferProcess.Result {
        try await CofferProcess.run(executable: try CofferProcess.builtExecutable("coffer-stress"),
                                    ["platform-default", directory.path, account],
                                    removing: keyring ? [] : ["DBUS_SESSION_BUS_ADDRESS"])
    }

    @Test("with a keyring: Ping's KeychainStorage, recorded; without it later, an error, not a file")
    func desktop() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let account = TestKeyring.uniqueAccount()
        let result = try await Self.run(directory.url, account: account, keyring: true)
        #expect(result.stdout == "keyring\nok\n", "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("tokens").path))
        let kept = KeychainStorage<String>(account: account, encryptor: SecuredKeyEncryptor() ?? NoEncryptor())
        #expect(try await kept.get() == "value-\(account)")
        #expect(try String(contentsOf: directory.appending("tokens.backend"), encoding: .utf8) == "keyring\n", "the choice is recorded")

        let withoutKeyring = try await Self.run(directory.url, account: account, keyring: false)
        #expect(withoutKeyring.status == 1 && withoutKeyring.stdout == "keyring\n", "a recorded keyring is not swapped for a file")
        #expect(withoutKeyring.stderr.contains("Secret Service"), "\(withoutKeyring.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("tokens").path), "no second session was started in a file")
        try await kept.delete()
    }

    @Test("without a keyring: a sealed 0600 file, logged; later runs with a keyring keep using the file")
    func headless() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let account = TestKeyring.uniqueAccount()
        let server = try await Self.run(directory.url, account: account, keyring: false)
        #expect(server.stdout == "file\nok\n", "\(server.stderr)")
        #expect(server.stderr.contains("the OS keyring cannot be used; keeping the data in an encrypted file"), "the choice is logged")
        let file = directory.appending("tokens")
        #expect(!(try Data(contentsOf: file)).contains(Data("value-".utf8)), "the file is sealed")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        #expect(try String(contentsOf: directory.appending("tokens.backend"), encoding: .utf8) == "file\n", "the choice is recorded")
        let desktop = try await Self.run(directory.url, account: account, keyring: true)
        #expect(desktop.stdout == "file\nok\n", "data once in the file stays there: \(desktop.stderr)")
        #expect(try await KeychainStorage<String>(account: account).get() == nil, "nothing went to the keyring")
    }

    @Test("two processes choosing at once, one with a keyring and one without, record and use one choice")
    func concurrentFirstChoices() async throws {
        for _ in 0..<4 {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let account = TestKeyring.uniqueAccount()
            async let withKeyring = Self.run(directory.url, account: account, keyring: true)
            async let without = Self.run(directory.url, account: account, keyring: false)
            let (one, other) = try await (withKeyring, without)
            #expect(one.stdout.split(separator: "\n").first == other.stdout.split(separator: "\n").first, "\(one.stdout) / \(other.stdout)")
            try? await KeychainStorage<String>(account: account).delete()
        }
    }
}
