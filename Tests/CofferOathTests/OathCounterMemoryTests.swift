import CofferMFACommons
import CofferOath
import CofferStorage
import Foundation
import GRDB
import Synchronization
import TestSupport
import Testing

/// The HOTP counter rule through `OathClient` alone: a secret removed and added again goes on
/// from its last counter, in every storage Coffer ships.
@Suite("OathClient: a HOTP counter never goes back")
struct OathCounterMemoryTests {
    /// RFC 4226's key ("12345678901234567890") and its first codes, counters 0 to 5.
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    static let codes = ["755224", "287082", "359152", "969429", "338314", "254676"]
    static func uri(_ secret: String = secret) -> String { "otpauth://hotp/Bank:alice?secret=\(secret)&issuer=Bank&counter=0" }

    static func sqlite(_ directory: TemporaryDirectory) throws -> SQLiteOathStorage {
        try SQLiteOathStorage(path: directory.appending("oath.sqlite").path,
                              encryptor: AESGCMEncryptor(keyAlias: "oath", keyStore: FileKeyStore(directory: directory.appending("keys"))))
    }

    static func client(_ storage: any OathStorage) async throws -> OathClient {
        try await OathClient.createClient { config in
            config.storage = storage
            config.enableCredentialCache = false
        }
    }

    /// Issues three codes, removes the credential, adds the same URI (or `again`) with a second
    /// client over `reopened` (another process's view of the same store), and returns the code
    /// the re-added credential gives first.
    static func removeAndReadd(first: any OathStorage, reopened: any OathStorage, again: String = uri()) async throws -> String {
        let client = try await client(first)
        let credential = try await client.addCredentialFromUri(uri())
        for expected in codes.prefix(3) { #expect(try await client.generateCode(credential.id) == expected) }
        #expect(try await client.deleteCredential(credential.id))
        let later = try await Self.client(reopened)
        let back = try await later.addCredentialFromUri(again)
        return try await later.generateCode(back.id)
    }

    @Test("memory storage: removed and re-added, the fourth code comes next")
    func memory() async throws {
        let storage = MemoryOathStorage()
        #expect(try await Self.removeAndReadd(first: storage, reopened: storage) == Self.codes[3])
    }

    @Test("SQLite: removed, then re-added through a storage opened afresh on the same file")
    func sqlite() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        #expect(try await Self.removeAndReadd(first: try Self.sqlite(directory), reopened: try Self.sqlite(directory)) == Self.codes[3])
    }

    @Test("another spelling of one secret (a zero byte more, lower case) is the same key")
    func spelling() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let padded = Self.secret.lowercased() + "aa"  // 21 bytes, the last one zero: HMAC pads to the same key
        #expect(try await Self.removeAndReadd(first: try Self.sqlite(directory), reopened: try Self.sqlite(directory), again: Self.uri(padded))
            == Self.codes[3])
    }

    @Test("the counter record is sealed, and a record moved in from elsewhere is refused, not read as empty")
    func sealedRecord() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = try Self.sqlite(directory)
        try await storage.remember(["abc": 7])
        let raw = try DatabaseQueue(path: storage.path)
        let row = try await raw.read { try Data.fetchOne($0, sql: "SELECT ledger FROM coffer_hotp_counters WHERE id = 1") }
        #expect(row.map { !String(decoding: $0, as: UTF8.self).contains("abc") } == true, "no fingerprint in the clear")
        try await raw.write { try $0.execute(sql: "UPDATE coffer_hotp_counters SET ledger = x'00112233'") }
        await #expect(throws: OathStorageError.self) { try await storage.rememberedCounters() }
        let client = try await Self.client(storage)
        await #expect(throws: OathStorageError.self, "a HOTP add waits for a readable record") { try await client.addCredentialFromUri(Self.uri()) }
        #expect(try await client.getCredentials().isEmpty, "nothing stored")
        _ = try await client.addCredentialFromUri("otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail")
    }

    @Test("saving a credential with an older counter does not move it back")
    func saveKeepsCounter() async throws {
        let storage = MemoryOathStorage()
        let client = try await Self.client(storage)
        let credential = try await client.addCredentialFromUri(Self.uri())
        for _ in 0..<3 { _ = try await client.generateCode(credential.id) }
        var stale = credential  // as read before the codes: counter 0
        stale.displayIssuer = "My bank"
        let saved = try await client.saveCredential(stale)
        #expect(saved.counter == 3 && saved.displayIssuer == "My bank")
        #expect(try await client.generateCode(credential.id) == Self.codes[3])
    }

    @Test("a removal killed after its hold is finished by removing again; the counter is kept")
    func interruptedRemoval() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = try Self.sqlite(directory)
        let client = try await Self.client(storage)
        let credential = try await client.addCredentialFromUri(Self.uri())
        for _ in 0..<2 { _ = try await client.generateCode(credential.id) }
        // What a process killed between the hold and the removal leaves: the credential locked.
        var held = try #require(try await storage.retrieveOathCredential(credentialId: credential.id))
        held.lockCredential(policyName: "coffer-removing")
        try await storage.storeOathCredential(held)
        await #expect(throws: OathError.self, "a held credential issues no code") { try await client.generateCode(credential.id) }
        #expect(try await client.getCredentials().first?.isLocked == true, "no policy lifts the hold")
        #expect(try await client.deleteCredential(credential.id))
        let back = try await client.addCredentialFromUri(Self.uri())
        #expect(try await client.generateCode(back.id) == Self.codes[2])
    }

    @Test("a removal racing code requests in another client: no code is issued twice after the re-add")
    func removalRacingCodes() async throws {
        for _ in 0..<5 {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let client = try await Self.client(try Self.sqlite(directory))
            let other = try await Self.client(try Self.sqlite(directory))
            let id = try await client.addCredentialFromUri(Self.uri()).id
            let issued = Issued()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        while true {
                            do {
                                let code = try await other.generateCodeWithValidity(id)
                                issued.counters.withLock { $0.append(code.counter) }
                            } catch { return }
                        }
                    }
                }
                group.addTask {
                    // Once codes are being issued (however loaded the machine is), remove it.
                    while issued.counters.withLock({ $0.count }) < 3 { try await Task.sleep(for: .milliseconds(1)) }
                    #expect(try await client.deleteCredential(id))
                }
                try await group.waitForAll()
            }
            let back = try await client.addCredentialFromUri(Self.uri())
            let next = try await client.generateCodeWithValidity(back.id)
            let before = issued.counters.withLock { $0 }
            #expect(!before.isEmpty)
            #expect(next.counter > before.max() ?? 0, "the code after the re-add uses a counter issued before the removal")
        }
    }

    /// The counter after each code issued.
    final class Issued: Sendable {
        let counters = Mutex<[Int]>([])
    }

    @Test("a storage without a ledger (an app's own) keeps Ping's behaviour: the counter starts over")
    func withoutLedger() async throws {
        #expect(try await Self.removeAndReadd(first: PlainOathStorage(), reopened: PlainOathStorage()) == Self.codes[0])
    }

    @Test("a removal's hold is lifted by no save and no policy listing in another client")
    func holdRespected() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storage = try Self.sqlite(directory)
        let client = try await Self.client(storage)
        let credential = try await client.addCredentialFromUri(Self.uri())
        _ = try await client.generateCode(credential.id)
        var held = try #require(try await storage.retrieveOathCredential(credentialId: credential.id))
        held.lockCredential(policyName: "coffer-removing")
        try await storage.storeOathCredential(held)
        let other = try await Self.client(try Self.sqlite(directory))
        await #expect(throws: OathError.self, "a save of the copy read before the hold") { try await other.saveCredential(credential) }
        let listed = try await other.getCredentials()
        #expect(listed.first?.isLocked == true && listed.first?.lockingPolicy == "coffer-removing")
        await #expect(throws: OathError.self) { try await other.generateCode(credential.id) }
    }

    @Test("a second credential with a HOTP secret another holds is refused, in any spelling")
    func oneSecretOneCredential() async throws {
        let client = try await Self.client(MemoryOathStorage())
        let first = try await client.addCredentialFromUri(Self.uri())
        #expect(try await client.generateCode(first.id) == Self.codes[0])
        await #expect(throws: OathError.self) { try await client.addCredentialFromUri(Self.uri()) }
        await #expect(throws: OathError.self) { try await client.addCredentialFromUri(Self.uri(Self.secret.lowercased() + "aa")) }
        #expect(try await client.getCredentials().count == 1)
        _ = try await client.addCredentialFromUri("otpauth://totp/Mail:ann?secret=\(Self.secret)&issuer=Mail")  // TOTP: no counter to replay
    }

    @Test("a TOTP, or another secret, saved over a HOTP credential: the HOTP counter is remembered first")
    func overwriteRemembers() async throws {
        for replacement in ["totp", "other secret"] {
            let storage = MemoryOathStorage()
            let client = try await Self.client(storage)
            let credential = try await client.addCredentialFromUri(Self.uri())
            for _ in 0..<3 { _ = try await client.generateCode(credential.id) }
            let over = replacement == "totp"
                ? OathCredential(id: credential.id, issuer: "Bank", accountName: "alice", oathType: .totp, secretKey: "JBSWY3DPEHPK3PXP")
                : OathCredential(id: credential.id, issuer: "Bank", accountName: "alice", oathType: .hotp, secretKey: "JBSWY3DPEHPK3PXP")
            _ = try await client.saveCredential(over)
            #expect(try await client.deleteCredential(credential.id))
            let back = try await client.addCredentialFromUri(Self.uri())
            #expect(try await client.generateCode(back.id) == Self.codes[3], "\(replacement)")
        }
    }
}
