import CofferAuthenticator
import Foundation
import CofferFuzzHarness
import Testing

/// R4: every seed and every input the fuzzers ever flagged (Fuzz/Corpus, Fuzz/Crashers) goes
/// through the same checks the fuzz targets apply (CofferStorageTesting.FuzzHarness), so a fixed
/// finding stays fixed.
@Suite("Fuzzer findings and seeds, replayed")
struct FuzzRegressionTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    static func inputs(_ target: String) throws -> [(name: String, data: Data)] {
        try ["Corpus", "Crashers"].flatMap { folder in
            let directory = fuzz.appendingPathComponent("\(folder)/\(target)")
            return try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }.sorted()
                .map { ("\(folder)/\(target)/\($0)", try Data(contentsOf: directory.appendingPathComponent($0))) }
        }
    }

    @Test("each input passes the target's checks", arguments: ["uri", "envelope", "aegis", "import"])
    func replay(target: String) async throws {
        let inputs = try Self.inputs(target)
        #expect(inputs.count >= 2, "the seeds are there")
        for (name, data) in inputs {
            do {
                switch target {
                case "uri": try FuzzHarness.uri(data)
                case "envelope": try await FuzzHarness.envelope(data)
                case "import": try FuzzHarness.importFile(data)
                default: try FuzzHarness.aegis(data)
                }
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
    }

    @Test("the findings so far, as plain cases")
    func findings() throws {
        // A colon inside the issuer used to end up in the rebuilt label, taken for the separator.
        let bank = try #require(try MechanismURI.parse("otpauth://totp/Bank:bob?secret=GEZDGNBVGY3TQOJQ&issuer=Bank://x").mechanisms.first)
        let rebuilt = MechanismURI.otpauth(type: .totp, issuer: bank.issuer, accountName: "b:o:b", secret: bank.secret)
        let again = try #require(try MechanismURI.parse(rebuilt).mechanisms.first)
        #expect(again.issuer == "Bank://x" && again.accountName == "b:o:b")
        // The Key URI format's encoded separator still separates when there is no literal one.
        #expect(try MechanismURI.parse("otpauth://totp/Bank%3Abob?secret=JBSWY3DP").account.accountName == "bob")
        // "A" is valid base32 for no whole byte: refused, not accepted and failing later.
        #expect(throws: URIParseError.invalidParameter(name: "secret", reason: "it holds no whole byte of key")) {
            try MechanismURI.parse("otpauth://totp/A:b?secret=A")
        }
        // A name at the limit (255 bytes of UTF-8) in non-ASCII characters, percent-encoded by
        // the builder, still parses.
        let long = String(repeating: "é", count: 127) + "a"
        let wide = MechanismURI.otpauth(type: .totp, issuer: long, accountName: long, secret: "JBSWY3DP")
        #expect(try MechanismURI.parse(wide).account.issuer == long)
    }
}
