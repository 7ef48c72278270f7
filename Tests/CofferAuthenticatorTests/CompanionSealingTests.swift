import CofferAuthenticator
import CofferStorage
import Foundation
import TestSupport
import Testing

/// Issue 30, point 4: what lives beside a SQLite store (a trash, the HOTP counter ledger) is
/// sealed through the store's one checked path, which refuses while the store's key cannot be
/// used; an encryptor used directly would make a second key.
@Suite("SQLiteStorageClient: companion records seal only under the store's key")
struct CompanionSealingTests {
    @Test("with the key file gone, sealCompanion and the counter ledger refuse and make no key; the key back, both work")
    func keyMissing() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        let database = directory.appending("authenticator.sqlite").path
        func open() throws -> SQLiteStorageClient {
            try SQLiteStorageClient(path: database, encryptor: AESGCMEncryptor(keyAlias: "org.coffer.authenticator", keyStore: FileKeyStore(directory: keys)))
        }
        let store = try open()
        #expect(store.setMechanism(mechanism: Mechanism(issuer: "Bank", accountName: "bob", type: .hotp, secret: "GEZDGNBVGY3TQOJQ")))
        let ledger = SealedCounterLedgerFile(dataDirectory: directory.url, store: store)
        try ledger.remember(["aa": 3])
        let sealed = try store.sealCompanion(Data("entry".utf8))

        let keyFile = keys.appendingPathComponent("org.coffer.authenticator.key")
        try FileManager.default.moveItem(at: keyFile, to: directory.appending("aside"))
        let reopened = try open()
        let missing = SealedCounterLedgerFile(dataDirectory: directory.url, store: reopened)
        let ledgerBytes = try Data(contentsOf: missing.file)
        #expect { try reopened.sealCompanion(Data("entry".utf8)) } throws: { error in
            if case .keyUnavailable? = error as? StorageClientError { return true } else { return false }
        }
        #expect(throws: (any Error).self) { try missing.remember(["aa": 9, "bb": 1]) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: keys.path).filter { !$0.hasPrefix(".") }.isEmpty,
                "no second key was made")
        #expect(try Data(contentsOf: missing.file) == ledgerBytes, "the ledger was left as it was")

        try FileManager.default.moveItem(at: directory.appending("aside"), to: keyFile)
        let restored = try open()
        #expect(try restored.openCompanion(sealed) == Data("entry".utf8))
        try SealedCounterLedgerFile(dataDirectory: directory.url, store: restored).remember(["aa": 9])
        #expect(try SealedCounterLedgerFile(dataDirectory: directory.url, store: restored).rememberedCounters() == ["aa": 9])
    }

    /// Found by the attack review: a client that had checked its key, then saw it moved away
    /// by another process, made a new key at its next write.
    @Test("a key that goes missing while a client is open is never replaced: the write fails, no key is made")
    func keyGoneWhileOpen() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.appending("keys")
        let store = try SQLiteStorageClient(path: directory.appending("a.sqlite").path,
                                            encryptor: AESGCMEncryptor(keyAlias: "a", keyStore: FileKeyStore(directory: keys)))
        let mechanism = Mechanism(issuer: "Bank", accountName: "bob", type: .hotp, secret: "GEZDGNBVGY3TQOJQ")
        #expect(store.setMechanism(mechanism: mechanism))
        #expect(store.keyProblem == nil)
        try FileManager.default.moveItem(at: keys.appendingPathComponent("a.key"), to: directory.appending("aside"))
        #expect(throws: (any Error).self) { try store.advanceCounter(mechanismUUID: mechanism.mechanismUUID) }
        #expect(!store.setMechanism(mechanism: Mechanism(issuer: "Mail", accountName: "ann", type: .totp, secret: "JBSWY3DPEHPK3PXP")))
        #expect(throws: (any Error).self) { try store.sealCompanion(Data("x".utf8)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: keys.path).filter { !$0.hasPrefix(".") }.isEmpty, "no key was made")
    }

    @Test("four writers raising one ledger at once (each lock its own descriptor, as processes have) lose none of each other's counters")
    func concurrentRaises() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStorageClient(path: directory.appending("a.sqlite").path,
                                            encryptor: AESGCMEncryptor(keyAlias: "a", keyStore: FileKeyStore(directory: directory.appending("keys"))))
        let ledger = SealedCounterLedgerFile(dataDirectory: directory.url, store: store)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask { for round in 0..<10 { try ledger.remember(["w\(writer)-\(round)": UInt64(round), "shared": UInt64(writer * 10 + round)]) } }
            }
            try await group.waitForAll()
        }
        let counters = try ledger.rememberedCounters()
        #expect(counters.count == 41 && counters["shared"] == 39, "\(counters.count) keys, shared = \(counters["shared"] ?? 0)")
    }
}
