import Crypto
import Foundation
import CofferStorage
import Testing

@Suite("AES-GCM envelope and encryptors")
struct EncryptionTests {
    let plaintext = Data("correct horse battery staple".utf8)

    @Test("NoEncryptor passes data through")
    func noEncryptor() async throws {
        #expect(try await NoEncryptor().encrypt(data: plaintext) == plaintext)
        #expect(try await NoEncryptor().decrypt(data: plaintext) == plaintext)
    }

    @Test("the envelope has the documented layout and hides the plaintext")
    func envelopeLayout() async throws {
        let encryptor = AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore())
        let sealed = try await encryptor.encrypt(data: plaintext)
        #expect(Array(sealed.prefix(4)) == Array("COFR".utf8))
        #expect(sealed[4] == 1, "format version")
        #expect(Array(sealed[5..<9]) == [0, 0, 0, 1], "key id 1, big-endian")
        #expect(sealed.count == 9 + 12 + plaintext.count + 16)
        #expect(sealed.range(of: plaintext) == nil)
        #expect(try await encryptor.decrypt(data: sealed) == plaintext)
        #expect(try AESGCMEncryptor.keyID(of: sealed) == 1)
    }

    @Test("opens with an independent AES-GCM implementation of the documented layout")
    func envelopeInteroperates() async throws {
        let keys = MemoryKeyStore()
        let encryptor = AESGCMEncryptor(keyAlias: "a", keyStore: keys)
        let sealed = try await encryptor.encrypt(data: plaintext)
        let key = try #require(try await keys.primaryKey(for: "a")).key
        let box = try AES.GCM.SealedBox(
            nonce: AES.GCM.Nonce(data: sealed[9..<21]), ciphertext: sealed[21..<(sealed.count - 16)],
            tag: sealed.suffix(16))
        #expect(try AES.GCM.open(box, using: key, authenticating: sealed.prefix(9)) == plaintext)
    }

    @Test("an envelope that is a slice of larger data (not starting at index 0) opens, both ways, and its header stays authenticated")
    func slicedEnvelopeOpens() async throws {
        let encryptor = AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore())
        let sealed = try await encryptor.encrypt(data: plaintext)
        let slice = (Data("row:".utf8) + sealed + Data("tail".utf8)).dropFirst(4).dropLast(4)
        #expect(slice.startIndex == 4)
        #expect(try await encryptor.decrypt(data: slice) == plaintext)
        #expect(try encryptor.decryptUnderKnownKey(data: slice) == plaintext)
        var damagedHeader = slice
        damagedHeader[damagedHeader.startIndex + 4] ^= 0x01  // the version byte: another format
        #expect(throws: EncryptorError.self) { try encryptor.decryptUnderKnownKey(data: damagedHeader) }
        var damagedBody = slice
        damagedBody[damagedBody.endIndex - 1] ^= 0x01
        #expect(throws: EncryptorError.self) { try encryptor.decryptUnderKnownKey(data: damagedBody) }
    }

    @Test("every seal uses a fresh nonce")
    func freshNonces() async throws {
        let encryptor = AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore())
        var nonces = Set<Data>()
        for _ in 0..<100 { nonces.insert(try await encryptor.encrypt(data: plaintext)[9..<21]) }
        #expect(nonces.count == 100)
    }

    @Test("changing any single byte of an envelope is detected")
    func everyByteIsAuthenticated() async throws {
        let encryptor = AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore())
        let sealed = try await encryptor.encrypt(data: plaintext)
        for index in sealed.indices {
            var damaged = sealed
            damaged[index] ^= 0x01
            await #expect(throws: EncryptorError.self, "byte \(index)") { try await encryptor.decrypt(data: damaged) }
        }
    }

    @Test("truncated, extended and foreign data give typed reasons")
    func malformedEnvelopes() async throws {
        let encryptor = AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore())
        let sealed = try await encryptor.encrypt(data: plaintext)
        #expect(await reason(encryptor, sealed.prefix(20)) == .truncated(length: 20))
        #expect(await reason(encryptor, sealed.dropLast()) == .authenticationFailed)
        #expect(await reason(encryptor, sealed + Data([0])) == .authenticationFailed)
        #expect(await reason(encryptor, Data(repeating: 0x41, count: 64)) == .notAnEnvelope)
        var future = sealed
        future[4] = 9
        #expect(await reason(encryptor, future) == .unsupportedVersion(9))
        var unknownKey = sealed
        unknownKey[8] = 7
        #expect(await reason(encryptor, unknownKey) == .unknownKey(alias: "a", keyID: 7))
    }

    @Test("data sealed under one alias does not open under another")
    func wrongKey() async throws {
        let keys = MemoryKeyStore()
        let sealed = try await AESGCMEncryptor(keyAlias: "a", keyStore: keys).encrypt(data: plaintext)
        try await keys.createKey(for: "b")
        #expect(await reason(AESGCMEncryptor(keyAlias: "b", keyStore: keys), sealed) == .authenticationFailed)
    }

    @Test("decrypting never creates a key")
    func decryptDoesNotCreateKeys() async throws {
        let keys = MemoryKeyStore()
        let sealed = try await AESGCMEncryptor(keyAlias: "a", keyStore: keys).encrypt(data: plaintext)
        #expect(await reason(AESGCMEncryptor(keyAlias: "fresh", keyStore: keys), sealed)
            == .unknownKey(alias: "fresh", keyID: 1))
        #expect(try await keys.primaryKey(for: "fresh") == nil)
    }

    @Test("after rotation old envelopes open and new ones use the new key")
    func rotation() async throws {
        let encryptor = AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore())
        let old = try await encryptor.encrypt(data: plaintext)
        #expect(try await encryptor.rotateKey() == 2)
        let new = try await encryptor.encrypt(data: plaintext)
        #expect(try AESGCMEncryptor.keyID(of: old) == 1)
        #expect(try AESGCMEncryptor.keyID(of: new) == 2)
        #expect(try await encryptor.decrypt(data: old) == plaintext)
        #expect(try await encryptor.decrypt(data: new) == plaintext)
    }

    @Test("errors explain themselves without quoting data")
    func errorMessages() async throws {
        let encryptor = AESGCMEncryptor(keyAlias: "a", keyStore: MemoryKeyStore())
        var sealed = try await encryptor.encrypt(data: plaintext)
        sealed[30] ^= 1
        do {
            _ = try await encryptor.decrypt(data: sealed)
            Issue.record("tampered data opened")
        } catch {
            let message = error.localizedDescription
            #expect(message.contains("authentication failed"))
            #expect(!message.contains("staple"))
        }
    }

    @Test("identity binding round-trips and rejects another identity")
    func identityBinding() throws {
        let wrapped = try IdentityBinding.wrap(plaintext, identity: "alice")
        #expect(try IdentityBinding.unwrap(wrapped, identity: "alice", location: "x") == plaintext)
        #expect(throws: StorageError.self) { try IdentityBinding.unwrap(wrapped, identity: "bob", location: "x") }
        #expect(throws: StorageError.self) { try IdentityBinding.unwrap(plaintext, identity: "alice", location: "x") }
        #expect(throws: StorageError.self) { try IdentityBinding.unwrap(wrapped.prefix(7), identity: "alice", location: "x") }
    }

    @Test("identity binding: each failure names its reason, slices and an empty payload unwrap, names compare byte for byte")
    func identityBindingReasons() throws {
        /// How unwrapping fails: `corrupted: <reason>`, `mismatch: <found>`, or `nil`.
        func failure(_ data: Data, _ identity: String) -> String? {
            do throws(StorageError) {
                _ = try IdentityBinding.unwrap(data, identity: identity, location: "x")
                return nil
            } catch .corrupted("x", let reason) {
                return "corrupted: \(reason)"
            } catch .identityMismatch("x", identity, let found) {
                return "mismatch: \(found)"
            } catch {
                return "other: \(error)"
            }
        }
        let wrapped = try IdentityBinding.wrap(plaintext, identity: "alice")
        #expect(failure(wrapped, "bob") == "mismatch: alice")
        #expect(failure(wrapped, "alic") == "mismatch: alice")
        #expect(failure(plaintext, "alice") == "corrupted: the decrypted data carries no identity binding")
        #expect(failure(Data(), "alice") == "corrupted: the decrypted data carries no identity binding")
        #expect(failure(wrapped.prefix(5), "alice") == "corrupted: the decrypted data carries no identity binding")
        #expect(failure(wrapped.prefix(7), "alice") == "corrupted: the identity binding is truncated")
        // A slice that does not start at zero (as a value read after its header is).
        let slice = (Data("header".utf8) + wrapped).dropFirst(6)
        #expect(try IdentityBinding.unwrap(slice, identity: "alice", location: "x") == plaintext)
        #expect(failure(slice, "bob") == "mismatch: alice")
        // An empty identity and an empty payload.
        #expect(try IdentityBinding.unwrap(IdentityBinding.wrap(Data(), identity: ""), identity: "", location: "x").isEmpty)
        #expect(failure(try IdentityBinding.wrap(Data(), identity: ""), "a") == "mismatch: ")
        // Canonically equivalent is not the same name: café in NFC and in NFD.
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        #expect(failure(try IdentityBinding.wrap(plaintext, identity: composed), decomposed) == "mismatch: \(composed)")
    }

    private func reason(_ encryptor: AESGCMEncryptor, _ data: Data) async -> EnvelopeError? {
        do {
            _ = try await encryptor.decrypt(data: data)
            return nil
        } catch EncryptorError.failedToDecrypt(let cause) {
            return cause as? EnvelopeError
        } catch {
            return nil
        }
    }
}
