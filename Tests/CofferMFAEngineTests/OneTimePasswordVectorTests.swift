import CofferMFAEngine
import Crypto
import Foundation
import Testing

/// The one OATH engine both generations share, against the RFCs' own vectors: a change here
/// changes every code Coffer issues, so the vectors sit beside the engine.
@Suite("OneTimePassword: RFC 4226 and RFC 6238 vectors")
struct OneTimePasswordVectorTests {
    static let sha1Seed = Data("12345678901234567890".utf8)

    @Test("RFC 4226 appendix D: HOTP for counters 0 to 9")
    func rfc4226() throws {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for (counter, code) in expected.enumerated() {
            #expect(try OneTimePassword.hotp(key: Self.sha1Seed, counter: UInt64(counter), digits: 6, hash: .sha1) == code)
        }
    }

    @Test("RFC 6238 appendix B: TOTP, 8 digits, SHA-1, SHA-256 and SHA-512", arguments: [
        (59.0, "94287082", "46119246", "90693936"),
        (1_111_111_109, "07081804", "68084774", "25091201"),
        (1_111_111_111, "14050471", "67062674", "99943326"),
        (1_234_567_890, "89005924", "91819424", "93441116"),
        (2_000_000_000, "69279037", "90698825", "38618901"),
        (20_000_000_000, "65353130", "77737706", "47863826"),
    ])
    func rfc6238(time: Double, sha1: String, sha256: String, sha512: String) throws {
        let at = Date(timeIntervalSince1970: time)
        let seeds: [(OneTimePassword.Hash, String, String)] = [
            (.sha1, "12345678901234567890", sha1),
            (.sha256, "12345678901234567890123456789012", sha256),
            (.sha512, "1234567890123456789012345678901234567890123456789012345678901234", sha512),
        ]
        for (hash, seed, code) in seeds {
            #expect(try OneTimePassword.totp(key: Data(seed.utf8), at: at, period: 30, digits: 8, hash: hash).code == code)
        }
    }

    @Test("a TOTP step is [start, end) of the period; digits outside 4...9, a period of 0 and an empty key are refused")
    func stepsAndLimits() throws {
        let step = try OneTimePassword.step(at: Date(timeIntervalSince1970: 59), period: 30)
        #expect(step.counter == 1 && step.start == Date(timeIntervalSince1970: 30) && step.end == Date(timeIntervalSince1970: 60))
        #expect(throws: OneTimePassword.Failure.self) { try OneTimePassword.step(at: Date(), period: 0) }
        #expect(throws: OneTimePassword.Failure.invalidDigits(10)) { try OneTimePassword.hotp(key: Self.sha1Seed, counter: 0, digits: 10, hash: .sha1) }
        #expect(throws: OneTimePassword.Failure.emptySecret) { try OneTimePassword.hotp(key: Data(), counter: 0, digits: 6, hash: .sha1) }
    }
}

/// Base32 as RFC 4648 defines it, and as OATH secrets are written.
@Suite("Base32Codec: RFC 4648 section 10 vectors")
struct Base32VectorTests {
    static let vectors = [("", ""), ("f", "MY======"), ("fo", "MZXQ===="), ("foo", "MZXW6==="), ("foob", "MZXW6YQ="),
                          ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI======")]

    @Test("encodes and decodes the RFC's vectors, padded and not (padding is skipped only when asked)")
    func vectors() throws {
        for (text, encoded) in Self.vectors {
            #expect(Base32Codec.encode(Data(text.utf8), padded: true) == encoded)
            #expect(try Base32Codec.decode(encoded, skipping: ["="]).bytes == Data(text.utf8))
            #expect(try Base32Codec.decode(encoded.replacingOccurrences(of: "=", with: "")).bytes == Data(text.utf8))
            #expect(Base32Codec.encode(Data(text.utf8)) == encoded.replacingOccurrences(of: "=", with: ""))
        }
    }

    @Test("a secret as people type it: lower case, spaces and dashes; what is not base32 is refused with where")
    func secrets() throws {
        #expect(try Base32Codec.decodeSecret("mzxw 6ytb-oi").bytes == Data("foobar".utf8))
        #expect(throws: Base32Codec.Failure.invalidCharacter(position: 4)) { try Base32Codec.decodeSecret("MZXW1") }
        #expect(throws: Base32Codec.Failure.invalidCharacter(position: 2)) { try Base32Codec.decode("MY======") }
    }
}

/// One HMAC key in every spelling.
@Suite("OathKeyIdentity: what HMAC makes of a key")
struct OathKeyIdentityEngineTests {
    @Test("trailing zero bytes up to the block are the same key; a key longer than the block is its hash; algorithms differ")
    func identity() {
        let key = Data("12345678901234567890".utf8)
        #expect(OathKeyIdentity(key: key, hash: .sha1) == OathKeyIdentity(key: key + Data([0, 0]), hash: .sha1))
        #expect(OathKeyIdentity(key: key, hash: .sha1) != OathKeyIdentity(key: key, hash: .sha256))
        let long = Data(repeating: 7, count: 100)
        #expect(OathKeyIdentity(key: long, hash: .sha1) == OathKeyIdentity(key: Data(Insecure.SHA1.hash(data: long)), hash: .sha1))
        #expect(!OathKeyIdentity(key: key, hash: .sha1).fingerprint.contains("3132333435"), "the key is not in its name")
    }
}
