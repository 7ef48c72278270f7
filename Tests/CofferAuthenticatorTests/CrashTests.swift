import CofferAuthenticator
import Foundation
import CofferStorage
import TestSupport
import Testing

/// R1: a child process saves in a loop and is killed with SIGKILL at a random moment; after each
/// kill the store opens and holds the old or the new value, never a torn or unreadable one.
/// `scripts/reliability` runs it 200 times per store; the normal suite runs it 15 times.
@Suite("Crash safety: SIGKILL while saving")
struct CrashTests {
    static let kills = Int(ProcessInfo.processInfo.environment["COFFER_CRASH_KILLS"] ?? "") ?? 15

    @Test("file stores hold a whole value after every kill", arguments: ["file", "encrypted"])
    func fileStores(kind: String) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var lastRound = -1
        var torn = 0, lost = 0
        for attempt in 0..<Self.kills {
            try await killWriter(kind, directory, attempt)
            let storage: StorageDelegate<String> = kind == "file"
                ? FileStorage<String>(fileName: "crash", directory: directory.url)
                : EncryptedFileStorage<String>(fileName: "crash", directory: directory.url)
            let value = try await storage.get()
            guard let value else {
                #expect(lastRound == -1, "kill \(attempt): a value that was stored has disappeared")
                if lastRound != -1 { lost += 1 }
                continue
            }
            #expect(StressValueCheck.isWhole(value), "kill \(attempt): torn value")
            if !StressValueCheck.isWhole(value) { torn += 1 }
            let round = StressValueCheck.round(of: value) ?? -1
            #expect(round >= 0, "kill \(attempt): unreadable value")
            lastRound = round
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.count <= 1, "at most the temporary file of the write that was killed is left: \(leftovers)")
        ReliabilityReport.record("R1", "SIGKILL while saving, \(kind == "file" ? "FileStorage" : "EncryptedFileStorage")",
                                 tried: "\(Self.kills) kills", outcome: "\(torn) torn, \(lost) lost, \(leftovers.count) temporary files left")
    }

    @Test("the SQLite store opens, passes integrity_check and reads its record after every kill")
    func sqliteStore() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var seen = false
        var unsound = 0, lost = 0
        for attempt in 0..<Self.kills {
            try await killWriter("sqlite", directory, attempt)
            guard FileManager.default.fileExists(atPath: directory.appending("crash.sqlite").path) else { continue }
            let client = try SQLiteStorageClient(
                path: directory.appending("crash.sqlite").path,
                encryptor: AESGCMEncryptor(keyAlias: "crash", keyStore: FileKeyStore(directory: directory.appending("keys"))))
            #expect(try client.integrityCheck() == ["ok"], "kill \(attempt)")
            let mechanism = client.getMechanismForUUID(uuid: "crash")
            #expect(client.unreadableRecordCount == 0, "kill \(attempt): \(String(describing: client.lastError))")
            if seen { #expect(mechanism != nil, "kill \(attempt): a stored record has disappeared") }
            if try client.integrityCheck() != ["ok"] || client.unreadableRecordCount > 0 { unsound += 1 }
            if seen && mechanism == nil { lost += 1 }
            if mechanism != nil { seen = true }
        }
        ReliabilityReport.record("R1", "SIGKILL while saving, SQLiteStorageClient", tried: "\(Self.kills) kills",
                                 outcome: "\(unsound) failed integrity_check or unreadable, \(lost) lost")
    }

    /// Starts the writer and kills it (SIGKILL, its whole process group) after a random delay.
    private func killWriter(_ kind: String, _ directory: TemporaryDirectory, _ attempt: Int) async throws {
        let delay = Duration.milliseconds(Int.random(in: 30...250))
        let result = try await CofferProcess.run(
            executable: try CofferProcess.builtExecutable("coffer-stress"), ["crash-writer", kind, directory.url.path],
            deadline: delay)
        #expect(result.timedOut || result.status == 0, "kill \(attempt): the writer failed on its own: \(result.stderr)")
    }
}

/// Checks values written by coffer-stress (`w<writer>r<round>:` + the writer's digit repeated).
enum StressValueCheck {
    static func round(of value: String) -> Int? {
        guard let colon = value.firstIndex(of: ":"), let r = value.firstIndex(of: "r") else { return nil }
        return Int(value[value.index(after: r)..<colon])
    }

    static func isWhole(_ value: String) -> Bool {
        guard let round = round(of: value), let colon = value.firstIndex(of: ":") else { return false }
        let body = value[value.index(after: colon)...]
        return body.count == 8_000 + round % 97 && body.allSatisfy { $0 == "1" }
    }
}
