import CofferOath
import CofferStorage
import CofferStorageTesting
import CofferAuthenticatorTesting
import Foundation
import GRDB
import TestSupport
import Synchronization
import Testing

@Suite("SQLiteOathStorage on real SQLite files")
struct SQLiteOathStorageTests {
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    func storage(_ directory: TemporaryDirectory, name: String = "oath.sqlite") throws -> SQLiteOathStorage {
        try SQLiteOathStorage(path: directory.url.appendingPathComponent(name).path,
                              encryptor: AESGCMEncryptor(keyAlias: "oath", keyStore: FileKeyStore(directory: directory.url.appendingPathComponent("keys"))))
    }

    @Test("conforms (a file per check)")
    func conforms() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let counter = Counter()
        try await OathStorageConformance(makeStorage: { try storage(directory, name: "oath-\(counter.next()).sqlite") }).run()
    }

    @Test("the file is 0600; the secret is sealed; a rolled-back counter, a swapped issuer or a moved secret does not open")
    func tamper() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = try storage(directory)
        for id in ["a", "b"] {
            try await storage.storeOathCredential(OathCredential(id: id, issuer: "Bank \(id)", accountName: id, oathType: .hotp, counter: 5, secretKey: Self.secret))
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: storage.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let raw = try DatabaseQueue(path: storage.path)
        let blob = try await raw.read { try Data.fetchOne($0, sql: "SELECT secret FROM mfa_oath_data WHERE id = 'a'") }
        #expect(blob.map { !String(decoding: $0, as: UTF8.self).contains(Self.secret) } == true)

        try await raw.write { try $0.execute(sql: "UPDATE mfa_oath_data SET counter = 1 WHERE id = 'a'") }
        await expectCorrupted { try await storage.retrieveOathCredential(credentialId: "a") }
        try await raw.write { try $0.execute(sql: "UPDATE mfa_oath_data SET counter = 5, issuer = 'Bank b' WHERE id = 'a'") }
        await expectCorrupted { try await storage.retrieveOathCredential(credentialId: "a") }
        try await raw.write { try $0.execute(sql: "UPDATE mfa_oath_data SET issuer = 'Bank a', secret = (SELECT secret FROM mfa_oath_data WHERE id = 'b') WHERE id = 'a'") }
        await expectCorrupted { try await storage.retrieveOathCredential(credentialId: "a") }
        #expect(try await storage.getAllOathCredentials().map(\.id) == ["b"], "a listing skips the damaged row and keeps the other")
        let client = try await OathClient.createClient { $0.storage = storage }
        await #expect(throws: OathStorageError.self) { try await client.generateCode("a") }
    }

    @Test("a lock lifted by hand does not open; a crafted row (text in an integer column) is refused and skipped, never a crash")
    func craftedRows() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = try storage(directory)
        var locked = OathCredential(id: "locked", issuer: "Bank", accountName: "a", oathType: .hotp, secretKey: Self.secret)
        locked.lockCredential(policyName: "deviceTampering")
        try await storage.storeOathCredential(locked)
        try await storage.storeOathCredential(OathCredential(id: "fine", issuer: "Shop", accountName: "b", oathType: .totp, secretKey: Self.secret))
        let raw = try DatabaseQueue(path: storage.path)
        try await raw.write { try $0.execute(sql: "UPDATE mfa_oath_data SET is_locked = 0, locking_policy = NULL WHERE id = 'locked'") }
        await expectCorrupted { try await storage.retrieveOathCredential(credentialId: "locked") }
        for crafted in ["digits = 'x'", "counter = 1e300", "is_locked = 'yes'", "issuer = x'00ff'", "created_at = 'soon'"] {
            try await raw.write { try $0.execute(sql: "UPDATE mfa_oath_data SET \(crafted) WHERE id = 'locked'") }
            await expectCorrupted { try await storage.retrieveOathCredential(credentialId: "locked") }
            #expect(try await storage.getAllOathCredentials().map(\.id) == ["fine"], "\(crafted): the other row still lists")
        }
    }

    @Test("a listing of 234 rows opened in batches of 50 while the next are read keeps their order and skips exactly the rows that fail")
    func batchedListing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // Small batches, so that few rows (few transactions, each synced) span several: the
        // whole suite shares one disk with gnome-keyring, whose calls time out behind it.
        let storage = try SQLiteOathStorage(
            path: directory.url.appendingPathComponent("oath.sqlite").path,
            encryptor: AESGCMEncryptor(keyAlias: "oath", keyStore: FileKeyStore(directory: directory.url.appendingPathComponent("keys"))),
            logger: nil, openingBatch: 50)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let ids = (0..<234).map { String(format: "c%05d", $0) }
        let secrets = [Self.secret, "JBSWY3DPEHPK3PXP", "KRSXG5CTMVRXEZLU"]
        func secret(of id: String) -> String { secrets[Int(id.dropFirst())! % 3] }
        for (index, id) in ids.enumerated() {
            try await storage.storeOathCredential(OathCredential(id: id, issuer: "Issuer \(index % 7)", accountName: id, oathType: .totp,
                                                                 createdAt: start.addingTimeInterval(Double(index)), secretKey: secrets[index % 3]))
        }
        let listed = try await storage.getAllOathCredentials()
        #expect(listed.map(\.id) == ids, "every row, oldest first, across batches")
        #expect(listed.allSatisfy { $0.secret == secret(of: $0.id) }, "every secret opened and set on its own credential")
        // One row that cannot be read and one secret that does not open, in different batches,
        // and one at the very end.
        let raw = try DatabaseQueue(path: storage.path)
        try await raw.write { db in
            try db.execute(sql: "UPDATE mfa_oath_data SET digits = 'x' WHERE id = 'c00150'")
            try db.execute(sql: "UPDATE mfa_oath_data SET secret = (SELECT secret FROM mfa_oath_data WHERE id = 'c00001') WHERE id = 'c00099'")
            try db.execute(sql: "UPDATE mfa_oath_data SET secret = (SELECT secret FROM mfa_oath_data WHERE id = 'c00001') WHERE id = 'c00233'")
        }
        let left = try await storage.getAllOathCredentials()
        #expect(left.map(\.id) == ids.filter { !["c00099", "c00150", "c00233"].contains($0) })
        #expect(left.allSatisfy { $0.secret == secret(of: $0.id) })
        // A listing cancelled at any moment throws or gives every row: never a short list.
        for attempt in 0..<40 {
            let listing = Task { try await storage.getAllOathCredentials() }
            if attempt > 0 { try await Task.sleep(for: .microseconds(250 * attempt)) }
            listing.cancel()
            if let listed = try? await listing.value {
                #expect(listed.count == left.count, "attempt \(attempt): \(listed.count) of \(left.count) listed")
            }
        }
    }

    @Test("4 processes × 50 HOTP codes of one credential on one file: 200 distinct counters, the counter 200 on")
    func fourProcesses() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = try storage(directory)
        let client = try await OathClient.createClient { $0.storage = storage }
        let credential = try await client.addCredentialFromUri("otpauth://hotp/Race:alice?secret=\(Self.secret)")
        let run = try await CofferProcess.stressAtOnce(["oath-hotp-sqlite", storage.path, directory.url.appendingPathComponent("keys").path, credential.id, "50"])
        #expect(run.allSucceeded, "\(run.failures)")
        #expect(run.numbers.count == 200 && Set(run.numbers).count == 200, "\(Set(run.numbers).count) distinct of \(run.numbers.count)")
        #expect(try await storage.retrieveOathCredential(credentialId: credential.id)?.counter == 200)
    }

    /// Issue 30: the library surfaces attacked as the review could not: one of the processes
    /// killed (SIGKILL) while it issues codes.
    @Test("R13: 4 processes issuing HOTP codes from one file, one killed halfway: no counter twice, the file opens, the counter past every code")
    func fourProcessesOneKilled() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = try storage(directory)
        let client = try await OathClient.createClient { $0.storage = storage }
        let credential = try await client.addCredentialFromUri("otpauth://hotp/Race:alice?secret=\(Self.secret)")
        let result = try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/bash"), ["-c", """
            for i in 1 2 3 4; do "$STRESS" oath-hotp-sqlite "$DB" "$KEYS" "$ID" 150 > "$OUT.$i" 2> "$OUT.err$i" & eval "pid$i=$!"; done
            # Killed once it is issuing codes (its first has reached the file), well before its last.
            while [ ! -s "$OUT.4" ] && kill -0 $pid4 2> /dev/null; do sleep 0.01; done
            kill -9 $pid4; wait $pid4 2> /dev/null; echo "killed=$?" >&2
            wait
            wait
            cat "$OUT".[1-4]
            """], environment: ["STRESS": try CofferProcess.builtExecutable("coffer-stress").path, "DB": storage.path,
                                "KEYS": directory.url.appendingPathComponent("keys").path, "ID": credential.id,
                                "OUT": directory.appending("out").path])
        let counters = result.stdout.split(separator: "\n").compactMap { Int($0) }
        #expect(counters.count >= 450 && counters.count < 600 && result.stderr.contains("killed=137"),
                "the three survivors issued theirs, the fourth was killed: \(counters.count) \(result.stderr)")
        #expect(Set(counters).count == counters.count, "no counter issued twice: \(counters.count - Set(counters).count) repeated")
        let stored = try #require(try await storage.retrieveOathCredential(credentialId: credential.id))
        // Each printed counter is the stored one after its code; a code the killed process claimed
        // but never printed is skipped, never issued again.
        #expect(stored.counter >= counters.max() ?? 0, "the stored counter is at or past every code issued")
        #expect(try await client.generateCodeWithValidity(credential.id).counter == stored.counter + 1, "and goes on from there")
        ReliabilityReport.record("R13", "4 processes × 150 HOTP codes through OathClient on one SQLiteOathStorage, one killed",
                                 tried: "\(counters.count) codes printed", outcome: "\(Set(counters).count) distinct; file opens; counter \(stored.counter)")
    }

    private func expectCorrupted(_ body: () async throws -> OathCredential?) async {
        do {
            _ = try await body()
            Issue.record("a tampered row opened")
        } catch let error as OathStorageError {
            guard case .storageCorrupted = error else { Issue.record("\(error)"); return }
        } catch {
            Issue.record("untyped: \(error)")
        }
    }
}

/// Numbers for file names, shared by the conformance kit's calls.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
