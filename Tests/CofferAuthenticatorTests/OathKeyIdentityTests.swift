import CofferAuthenticator
import CofferMFAEngine
import Crypto
import Foundation
import Testing

/// Issue 30, point 2: one HOTP secret is one secret in every spelling. HMAC pads a key shorter
/// than its block with zero bytes and hashes one longer than its block, so those spellings
/// issue the same codes; everything that asks "the same secret?" must say yes to them.
@Suite("One OATH key in every spelling (OathKeyIdentity)")
struct OathKeyIdentityTests {
    static let algorithms: [OathAlgorithm] = [.sha1, .sha256, .sha384, .sha512, .md5]

    static func codes(_ key: Data, _ algorithm: OathAlgorithm) throws -> [String] {
        try (0..<4).map { try OathGenerator.hotp(secret: key, counter: $0, digits: 8, algorithm: algorithm) }
    }

    static func identity(_ key: Data, _ algorithm: OathAlgorithm) -> OathKeyIdentity? {
        Mechanism(issuer: "I", accountName: "a", type: .hotp, secret: Base32.encode(key), algorithm: algorithm).keyIdentity
    }

    @Test("zero bytes up to the block, and a long key's hash, are the same key: the same codes and the same identity",
          arguments: algorithms)
    func spellingsThatHMACTakesAsOne(algorithm: OathAlgorithm) throws {
        let block = [OathAlgorithm.sha384, .sha512].contains(algorithm) ? 128 : 64
        let key = Data("12345678901234567890".utf8)
        var spellings = [key, key + Data([0]), key + Data(repeating: 0, count: block - key.count)]
        // A key longer than the block is hashed first: the hash, as a key, is the same key.
        let long = Data((0..<(block + 7)).map { UInt8($0 & 0xFF) | 1 })
        let hashed: Data = switch algorithm {
        case .sha1: Data(Insecure.SHA1.hash(data: long))
        case .sha256: Data(SHA256.hash(data: long))
        case .sha384: Data(SHA384.hash(data: long))
        case .sha512: Data(SHA512.hash(data: long))
        case .md5: Data(Insecure.MD5.hash(data: long))
        }
        for same in spellings.dropFirst() {
            #expect(try Self.codes(same, algorithm) == Self.codes(key, algorithm), "HMAC itself takes them as one")
            #expect(Self.identity(same, algorithm) == Self.identity(key, algorithm))
        }
        #expect(try Self.codes(long, algorithm) == Self.codes(hashed, algorithm))
        #expect(Self.identity(long, algorithm) == Self.identity(hashed, algorithm))
        // Beyond the block, a zero byte is part of a longer key: another key, other codes.
        spellings = [key + Data(repeating: 0, count: block - key.count + 1)]
        #expect(try Self.codes(spellings[0], algorithm) != Self.codes(key, algorithm))
        #expect(Self.identity(spellings[0], algorithm) != Self.identity(key, algorithm))
    }

    @Test("different keys, or one key under two algorithms, are different: identities differ exactly when codes do")
    func identitiesDifferWhenCodesDo() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let length = Int.random(in: 1...140, using: &generator)
            var key = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let other = Bool.random(using: &generator) ? key + Data(repeating: 0, count: Int.random(in: 0...3)) : { key[0] ^= 1; return key }()
            for algorithm in Self.algorithms {
                let sameCodes = try Self.codes(key, algorithm) == Self.codes(other, algorithm)
                #expect(sameCodes == (Self.identity(key, algorithm) == Self.identity(other, algorithm)), "\(algorithm), \(length) bytes")
            }
        }
        let key = Data("12345678901234567890".utf8)
        #expect(Self.identity(key, .sha1) != Self.identity(key, .sha256))
    }

    @Test("the text's case, spaces and padding do not matter; push mechanisms and non-base32 secrets have no identity")
    func textSpellings() {
        let spelled = ["GEZDGNBVGY3TQOJQ", "gezd gnbv gy3t qojq", "GEZDGNBVGY3TQOJQ====", "GEZDGNBVGY3TQOJQAA", "gezd-gnbv-gy3t-qojq-aa"]
        let identities = Set(spelled.map { Mechanism(issuer: "I", accountName: "a", type: .hotp, secret: $0).keyIdentity })
        #expect(identities.count == 1 && identities.first! != nil)
        #expect(Mechanism(issuer: "I", accountName: "a", type: .push, secret: "GEZDGNBVGY3TQOJQ").keyIdentity == nil)
        #expect(Mechanism(issuer: "I", accountName: "a", type: .hotp, secret: "not base32!").keyIdentity == nil)
    }

    @Test("a counter an earlier Coffer remembered under a padded spelling's raw bytes still counts")
    func legacyLedgerNames() {
        let padded = Mechanism(issuer: "I", accountName: "a", type: .hotp, secret: "GEZDGNBVGY3TQOJQAA")
        let plain = Mechanism(issuer: "I", accountName: "a", type: .hotp, secret: "GEZDGNBVGY3TQOJQ")
        // Coffer before issue 30 named a key by the SHA-256 of its bytes as spelled.
        let legacy = SHA256.hash(data: try! Base32.decode(padded.secret)).map { String(format: "%02x", $0) }.joined()
        #expect(HOTPCounters.floor(for: plain, in: [legacy: 7]) == 7)
        #expect(HOTPCounters.floor(for: padded, in: [legacy: 7]) == 7)
        #expect(HOTPCounters.floor(for: plain, in: [plain.keyIdentity!.fingerprint: 9, legacy: 7]) == 9)
        let other = Mechanism(issuer: "I", accountName: "a", type: .hotp, secret: "JBSWY3DPEHPK3PXP")
        #expect(HOTPCounters.floor(for: other, in: [legacy: 7]) == 0)
    }
}
