@testable import CofferMFAEngine
import CofferStorage
import Foundation
import Synchronization
import Testing

/// FieldSealer's synchronous opening: under keys the encryptor already fetched it opens in the
/// calling thread, and it must answer exactly as the async path does, field by field.
@Suite("FieldSealer: opening under known keys answers as the async path does")
struct FieldSealerTests {
    /// An encryptor that counts its async opens: the synchronous path must not call it once
    /// every key is known.
    final class CountingEncryptor: Encryptor, KnownKeyOpening {
        let inner: AESGCMEncryptor
        let asyncOpens = Mutex(0)
        init(_ inner: AESGCMEncryptor) { self.inner = inner }
        func encrypt(data: Data) async throws -> Data { try await inner.encrypt(data: data) }
        func decrypt(data: Data) async throws -> Data {
            asyncOpens.withLock { $0 += 1 }
            return try await inner.decrypt(data: data)
        }
        func decryptUnderKnownKey(data: Data) throws(EncryptorError) -> Data? { try inner.decryptUnderKnownKey(data: data) }
    }

    static func outcome(_ result: Result<String, any Error>) -> String {
        switch result {
        case .success(let text): "ok \(text)"
        case .failure(let error): "error \(error)"
        }
    }

    @Test("good, damaged, swapped and foreign fields: the same results as the async path, with no trip once keys are known")
    func sameResults() async throws {
        let keys = MemoryKeyStore()
        let counting = CountingEncryptor(AESGCMEncryptor(keyAlias: "f", keyStore: keys))
        let sealer = FieldSealer(encryptor: counting)
        let good = try sealer.seal("secret-1", for: "mechanism/a/secret")
        var damaged = good
        damaged[damaged.count - 1] ^= 0x01
        let swapped = try sealer.seal("secret-2", for: "mechanism/b/secret")
        let foreign = try await AESGCMEncryptor(keyAlias: "f", keyStore: MemoryKeyStore()).encrypt(data: Data("x".utf8))
        let fields: [(sealed: Data, field: String)] = [
            (good, "mechanism/a/secret"), (damaged, "mechanism/a/secret"), (swapped, "mechanism/a/secret"),
            (foreign, "mechanism/c/secret"), (Data("not an envelope".utf8), "mechanism/d/secret"),
        ]
        let viaAsync = await sealer.opening(fields).map(Self.outcome)
        let before = counting.asyncOpens.withLock { $0 }
        let viaSync = sealer.open(fields).map(Self.outcome)
        #expect(viaSync == viaAsync)
        #expect(viaSync[0] == "ok secret-1")
        #expect(viaSync.dropFirst().allSatisfy { $0.hasPrefix("error ") })
        #expect(counting.asyncOpens.withLock { $0 } == before, "every key was known: no trip to the async encryptor")
    }

    @Test("a key not fetched yet (a fresh encryptor, a rotation by another instance) sends the batch the async way, and it opens")
    func unknownKeyFallsBack() async throws {
        let keys = MemoryKeyStore()
        let writer = FieldSealer(encryptor: AESGCMEncryptor(keyAlias: "f", keyStore: keys))
        let first = try writer.seal("one", for: "x")
        let counting = CountingEncryptor(AESGCMEncryptor(keyAlias: "f", keyStore: keys))
        let reader = FieldSealer(encryptor: counting)
        #expect(try counting.decryptUnderKnownKey(data: first) == nil, "nothing fetched yet")
        #expect(reader.open([(first, "x")]).map(Self.outcome) == ["ok one"])
        #expect(counting.asyncOpens.withLock { $0 } == 1)

        try await AESGCMEncryptor(keyAlias: "f", keyStore: keys).rotateKey()
        let second = try writer.seal("two", for: "y")
        #expect(try counting.decryptUnderKnownKey(data: second) == nil, "key 2 not fetched by this reader")
        #expect(reader.open([(first, "x"), (second, "y")]).map(Self.outcome) == ["ok one", "ok two"])
        #expect(counting.asyncOpens.withLock { $0 } == 2, "the batch went the async way, which asked the encryptor for the new key only")
        #expect(reader.open([(first, "x"), (second, "y")]).map(Self.outcome) == ["ok one", "ok two"])
        #expect(counting.asyncOpens.withLock { $0 } == 2, "then both keys are known")
    }
}
