import CofferAuthenticator
import Foundation
import Testing

@Suite("OATH: HOTP, TOTP and base32")
struct OathTests {
    static let rfc4226Secret = Data("12345678901234567890".utf8)

    @Test("RFC 4226 appendix D: HOTP values for counters 0 to 9")
    func rfc4226() throws {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for (counter, code) in expected.enumerated() {
            #expect(try OathGenerator.hotp(secret: Self.rfc4226Secret, counter: UInt64(counter)) == code, "counter \(counter)")
        }
    }

    struct TOTPVector: Sendable, CustomTestStringConvertible {
        let time: TimeInterval
        let sha1: String, sha256: String, sha512: String
        var testDescription: String { "T=\(Int(time))" }
    }

    static let rfc6238Vectors = [
        TOTPVector(time: 59, sha1: "94287082", sha256: "46119246", sha512: "90693936"),
        TOTPVector(time: 1_111_111_109, sha1: "07081804", sha256: "68084774", sha512: "25091201"),
        TOTPVector(time: 1_111_111_111, sha1: "14050471", sha256: "67062674", sha512: "99943326"),
        TOTPVector(time: 1_234_567_890, sha1: "89005924", sha256: "91819424", sha512: "93441116"),
        TOTPVector(time: 2_000_000_000, sha1: "69279037", sha256: "90698825", sha512: "38618901"),
        TOTPVector(time: 20_000_000_000, sha1: "65353130", sha256: "77737706", sha512: "47863826"),
    ]

    @Test("RFC 6238 appendix B: TOTP with SHA-1, SHA-256 and SHA-512", arguments: rfc6238Vectors)
    func rfc6238(vector: TOTPVector) throws {
        let date = Date(timeIntervalSince1970: vector.time)
        let seeds: [(OathAlgorithm, String, String)] = [
            (.sha1, "12345678901234567890", vector.sha1),
            (.sha256, "12345678901234567890123456789012", vector.sha256),
            (.sha512, "1234567890123456789012345678901234567890123456789012345678901234", vector.sha512),
        ]
        for (algorithm, seed, code) in seeds {
            let result = try OathGenerator.totp(secret: Data(seed.utf8), at: date, period: 30, digits: 8, algorithm: algorithm)
            #expect(result.code == code, "\(algorithm)")
        }
    }

    @Test("a TOTP code knows its window")
    func totpWindow() throws {
        let code = try OathGenerator.totp(secret: Self.rfc4226Secret, at: Date(timeIntervalSince1970: 65), period: 30)
        #expect(code.validFrom == Date(timeIntervalSince1970: 60))
        #expect(code.validUntil == Date(timeIntervalSince1970: 90))
        #expect(code.secondsRemaining(at: Date(timeIntervalSince1970: 65)) == 25)
        #expect(code.code.count == 6)
    }

    @Test("SHA-384 and MD5 work for legacy URIs; digits and period are checked")
    func otherAlgorithmsAndLimits() throws {
        let sha384 = try OathGenerator.hotp(secret: Self.rfc4226Secret, counter: 0, algorithm: .sha384)
        let md5 = try OathGenerator.hotp(secret: Self.rfc4226Secret, counter: 0, algorithm: .md5)
        #expect(sha384.count == 6 && md5.count == 6 && sha384 != md5)
        // Every MD5 counter works, including those whose truncation offset would pass the end
        // of a 16-byte MAC.
        for counter in 0..<64 as Range<UInt64> {
            #expect(try OathGenerator.hotp(secret: Self.rfc4226Secret, counter: counter, algorithm: .md5).count == 6)
        }
        #expect(throws: OathGenerator.Failure.invalidDigits(5)) { try OathGenerator.hotp(secret: Self.rfc4226Secret, counter: 0, digits: 5) }
        #expect(throws: OathGenerator.Failure.invalidDigits(9)) { try OathGenerator.hotp(secret: Self.rfc4226Secret, counter: 0, digits: 9) }
        #expect(throws: OathGenerator.Failure.invalidPeriod(0)) { try OathGenerator.totp(secret: Self.rfc4226Secret, period: 0) }
        #expect(throws: OathGenerator.Failure.emptySecret) { try OathGenerator.hotp(secret: Data(), counter: 0) }
    }

    @Test("base32 decodes leniently and rejects what is not base32")
    func base32() throws {
        let expected = Data("Hello!".utf8) + Data([0xDE, 0xAD, 0xBE, 0xEF])
        #expect(try Base32.decode("JBSWY3DPEHPK3PXP") == expected)
        #expect(try Base32.decode("jbsw y3dp-ehpk 3pxp") == expected)
        #expect(try Base32.decode("JBSWY3DPEHPK3PXP======") == expected)
        #expect(try Base32.decode("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ") == Self.rfc4226Secret)
        #expect(throws: Base32.DecodingError.invalidCharacter("1", position: 4)) { try Base32.decode("JBSW1") }
        #expect(throws: Base32.DecodingError.empty) { try Base32.decode(" -== ") }
        for length in 0..<40 {
            let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37) })
            #expect(try length == 0 || Base32.decode(Base32.encode(data)) == data)
        }
    }
}
