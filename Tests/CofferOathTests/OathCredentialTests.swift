import CofferMFACommons
import CofferOath
import CofferStorageTesting
import Foundation
import Testing

@Suite("Ping's OathCredential: JSON, URIs and what it shows")
struct OathCredentialTests {
    static let secret = "JBSWY3DPEHPK3PXP"

    @Test("JSON has Ping's keys and raw values, createdAt as seconds since 2001, no secret; Ping's JSON reads back")
    func json() throws {
        let credential = OathCredential(
            id: "C1", issuer: "Example", accountName: "alice", oathType: .hotp, oathAlgorithm: .sha256,
            counter: 7, createdAt: Date(timeIntervalSinceReferenceDate: 1000), secretKey: Self.secret)
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(credential)) as? [String: Any] ?? [:]
        #expect(Set(object.keys) == ["id", "issuer", "displayIssuer", "accountName", "displayAccountName", "oathType",
                                     "oathAlgorithm", "digits", "period", "counter", "createdAt", "isLocked"])
        #expect(object["oathType"] as? String == "hotp" && object["oathAlgorithm"] as? String == "SHA256")
        #expect(object["createdAt"] as? Double == 1000)
        #expect(!String(decoding: try JSONEncoder().encode(credential), as: UTF8.self).contains(Self.secret))

        let ping = """
            {"id":"P","userId":"u","issuer":"Ping","displayIssuer":"PING","accountName":"bob","displayAccountName":"Bob",
             "oathType":"totp","oathAlgorithm":"SHA512","digits":8,"period":60,"counter":0,"createdAt":700000000.5,
             "backgroundColor":"ff0000","lockingPolicy":"deviceTampering","isLocked":true}
            """
        let decoded = try JSONDecoder().decode(OathCredential.self, from: Data(ping.utf8))
        #expect(decoded.displayIssuer == "PING" && decoded.oathAlgorithm == .sha512 && decoded.period == 60 && decoded.isLocked)
        #expect(decoded.createdAt == Date(timeIntervalSinceReferenceDate: 700_000_000.5) && decoded.secret.isEmpty)
        #expect(decoded.withSecret(Self.secret).secret == Self.secret)
    }

    @Test("description, dump and interpolation never show the secret")
    func noSecretShown() {
        let credential = OathCredential(issuer: "Example", accountName: "alice", oathType: .totp, secretKey: Self.secret)
        var dumped = ""
        dump(credential, to: &dumped)
        #expect(credential.description == "Example:alice (totp)")
        #expect(!dumped.contains(Self.secret) && !"\(credential)".contains(Self.secret) && !String(reflecting: credential).contains(Self.secret))
        #expect(dumped.contains("counter"), "the mirror keeps the other fields")
    }

    @Test("fromUri keeps Ping's rules: issuers, display issuer, secret as given, ranges; toUri reads back")
    func uris() async throws {
        let parsed = try await OathCredential.fromUri(
            "otpauth://hotp/Example:alice@example.com?secret=jbsw%20y3dp&issuer=EXAMPLE&digits=4&counter=5&uid=dXNlcjE&b=%23aabbcc&algorithm=sha512")
        #expect(parsed.issuer == "Example" && parsed.displayIssuer == "EXAMPLE" && parsed.accountName == "alice@example.com")
        #expect(parsed.secret == "jbsw y3dp" && parsed.digits == 4 && parsed.counter == 5 && parsed.oathAlgorithm == .sha512)
        #expect(parsed.userId == "user1" && parsed.backgroundColor == "aabbcc")
        let again = try await OathCredential.fromUri(try await parsed.toUri())
        #expect(again.issuer == "Example" && again.displayIssuer == "EXAMPLE" && again.accountName == parsed.accountName && again.counter == 5 && again.digits == 4)
        #expect(again.userId == "user1" && again.oathAlgorithm == .sha512 && again.backgroundColor == "aabbcc")

        await #expect(throws: UriParseError.self) { try await OathCredential.fromUri("otpauth://totp/Other:alice?secret=\(Self.secret)&issuer=Example") }
        for (uri, expected) in [
            ("otpauth://totp/A:b?secret=\(Self.secret)&digits=9", "digits"),
            ("otpauth://totp/A:b?secret=\(Self.secret)&period=301", "period"),
            ("otpauth://hotp/A:b?secret=\(Self.secret)&counter=-1", "counter"),
            ("otpauth://totp/A:b?secret=\(Self.secret)&secret=\(Self.secret)", "more than once"),
        ] {
            do {
                _ = try await OathCredential.fromUri(uri)
                Issue.record("accepted \(uri)")
            } catch let error as OathError {
                #expect(error.errorDescription?.contains(expected) == true, "\(error)")
            }
        }
        await #expect(throws: OathError.self) { try await OathCredential.fromUri("otpauth://totp/A:b?issuer=A") }
        await #expect(throws: OathError.self) { try await OathCredential.fromUri("otpauth://yotp/A:b?secret=\(Self.secret)") }
        await #expect(throws: OathError.self) { try await OathCredential.fromUri("pushauth://push/A:b?secret=\(Self.secret)") }
        do {
            _ = try await OathCredential.fromUri("otpauth://totp/A:b?secret=NOT-BASE32!")
            Issue.record("accepted a secret that is not base32")
        } catch let error as OathError {
            guard case .invalidSecret = error else { Issue.record("\(error)"); return }
            #expect(error.errorDescription?.contains("NOT") == false, "the message does not repeat the secret")
        }
    }

    @Test("10,000 crafted URIs get typed errors or credentials, never a crash or a secret in a message")
    func craftedUris() async {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["otpauth://", "mfauth://", "totp/", "hotp/", "A:b", "?", "&", "secret=", Self.secret, "digits=", "period=",
                      "counter=", "-1", "99999999999999999999", "0", "9", "%00", "%E2%80%AE", "javascript:", "../", ":", "issuer=",
                      "uid=", "=", "#", String(repeating: "A", count: 300), "\u{202E}", "\u{0}", "algorithm=", "MD5", "SHA512"]
        var accepted = 0
        for _ in 0..<10_000 {
            let uri = (0..<Int.random(in: 1...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            do {
                let credential = try await OathCredential.fromUri(uri)
                #expect((4...8).contains(credential.digits) && (1...300).contains(credential.period) && credential.counter >= 0)
                accepted += 1
            } catch let error as OathError {
                #expect(!(error.errorDescription ?? "").contains(Self.secret))
            } catch is UriParseError {
            } catch {
                Issue.record("an untyped error: \(type(of: error))")
            }
        }
        #expect(accepted < 10_000)
    }

    @Test("Data(base32Encoded:) follows Ping: ends trimmed, padding stripped, inner spaces refused, empty is empty")
    func base32() {
        #expect(Data(base32Encoded: " JBSWY3DPEHPK3PXP== \n") == Data("Hello!".utf8) + Data([0xDE, 0xAD, 0xBE, 0xEF]))
        #expect(Data(base32Encoded: "JBSW Y3DP") == nil && Data(base32Encoded: "JBSW-Y3DP") == nil)
        #expect(Data(base32Encoded: "") == Data())
        #expect(Data(base32Encoded: String(repeating: "A", count: 10_000)) == nil)
        #expect(Data("Hello!".utf8).base32EncodedString() == "JBSWY3DPEE======")
    }
}
