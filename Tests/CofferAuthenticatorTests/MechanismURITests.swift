import CofferAuthenticator
import Foundation
import Testing

@Suite("Parsing otpauth, pushauth and mfauth URIs")
struct MechanismURITests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func base64url(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    var pushParameters: String {
        let secret = Data((0..<32).map { UInt8($0) }).base64EncodedString()
        return "r=\(base64url("https://am.example.com/json/push/sns/message?_action=register"))"
            + "&a=\(base64url("https://am.example.com/json/push/sns/message?_action=authenticate"))"
            + "&s=\(secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
            + "&c=\(Data("challenge-bytes".utf8).base64EncodedString())"
            + "&l=\(Data("amlbcookie=01".utf8).base64EncodedString())&m=REGISTER-42"
    }

    @Test("a full TOTP URI")
    func totp() throws {
        let parsed = try MechanismURI.parse(
            "otpauth://totp/Example%20Co:alice%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Example%20Co&algorithm=SHA256&digits=8&period=60",
            now: now)
        #expect(parsed.account.issuer == "Example Co")
        #expect(parsed.account.accountName == "alice@example.com")
        #expect(parsed.account.displayIssuer == nil)
        #expect(parsed.account.timeAdded == now)
        let mechanism = try #require(parsed.mechanisms.first)
        #expect(parsed.mechanisms.count == 1)
        #expect(mechanism.type == .totp && mechanism.algorithm == .sha256 && mechanism.digits == 8 && mechanism.period == 60)
        #expect(mechanism.secret == "JBSWY3DPEHPK3PXP")
        #expect(mechanism.issuer == "Example Co" && mechanism.accountName == "alice@example.com")
    }

    @Test("HOTP takes a counter; defaults apply to what is absent")
    func hotpAndDefaults() throws {
        let parsed = try MechanismURI.parse("otpauth://hotp/Bank:bob?secret=jbsw%20y3dp-ehpk3pxp&counter=42", now: now)
        let mechanism = try #require(parsed.mechanisms.first)
        #expect(mechanism.type == .hotp && mechanism.counter == 42)
        #expect(mechanism.algorithm == .sha1 && mechanism.digits == 6 && mechanism.period == 30)
        #expect(mechanism.secret == "JBSWY3DPEHPK3PXP", "the secret is normalised")
        #expect(parsed.account.issuer == "Bank")
    }

    @Test("the issuer parameter wins over the label; the label's issuer becomes the display issuer")
    func issuerDisagreement() throws {
        let parsed = try MechanismURI.parse("otpauth://totp/Old%20Name:carol?secret=JBSWY3DPEHPK3PXP&issuer=NewName")
        #expect(parsed.account.issuer == "NewName")
        #expect(parsed.account.displayIssuer == "Old Name")
        let unlabeled = try MechanismURI.parse("otpauth://totp/carol?secret=JBSWY3DPEHPK3PXP&issuer=Solo")
        #expect(unlabeled.account.issuer == "Solo" && unlabeled.account.accountName == "carol")
    }

    @Test("each bad parameter is named", arguments: [
        ("otpauth://totp/A:b?issuer=A", URIParseError.missingParameter("secret")),
        ("otpauth://totp/A:b?secret=JBSW1", .invalidParameter(name: "secret", reason: "the secret is not base32: character 5 is not a letter A–Z or a digit 2–7")),
        ("otpauth://totp/A:b?secret=JBSWY3DP&algorithm=SHA3", .invalidParameter(name: "algorithm", reason: "expected SHA1, SHA256, SHA384, SHA512 or MD5")),
        ("otpauth://totp/A:b?secret=JBSWY3DP&digits=5", .invalidParameter(name: "digits", reason: "expected a whole number from 6 to 8")),
        ("otpauth://totp/A:b?secret=JBSWY3DP&digits=9", .invalidParameter(name: "digits", reason: "expected a whole number from 6 to 8")),
        ("otpauth://totp/A:b?secret=JBSWY3DP&period=0", .invalidParameter(name: "period", reason: "expected a whole number from 1 to 86400")),
        ("otpauth://totp/A:b?secret=JBSWY3DP&period=abc", .invalidParameter(name: "period", reason: "expected a whole number from 1 to 86400")),
        ("otpauth://hotp/A:b?secret=JBSWY3DP&counter=-1", .invalidParameter(name: "counter", reason: "expected a whole number from 0 to 9223372036854775806")),
        ("otpauth://totp/A:b?secret=JBSWY3DP&secret=JBSWY3DP", .invalidParameter(name: "secret", reason: "it appears more than once")),
        ("otpauth://totp/?secret=JBSWY3DP", .invalidParameter(name: "label", reason: "it names neither an issuer nor an account, and there is no issuer parameter")),
        ("otpauth://push/A:b?secret=JBSWY3DP", .unsupportedType("push")),
        ("otpauth://motp/A:b?secret=JBSWY3DP", .unsupportedType("motp")),
        ("http://totp/A:b?secret=JBSWY3DP", .unsupportedScheme("http")),
        ("otpauth://totp/A:b?secret=JBSWY3DP&b=red", .invalidParameter(name: "b", reason: "expected a colour as six hexadecimal digits")),
    ] as [(String, URIParseError)])
    func badParameters(uri: String, expected: URIParseError) {
        #expect(throws: expected) { try MechanismURI.parse(uri) }
    }

    @Test("hostile input is refused with a clear error")
    func hostileInput() throws {
        #expect(throws: URIParseError.tooLong(length: 20000, limit: 16384)) {
            try MechanismURI.parse("otpauth://totp/A:b?secret=" + String(repeating: "A", count: 20000 - 26))
        }
        #expect(throws: URIParseError.malformed(reason: "it contains control characters")) {
            try MechanismURI.parse("otpauth://totp/A:b\u{7}?secret=JBSWY3DP")
        }
        #expect(throws: URIParseError.invalidParameter(name: "label", reason: "it contains control characters")) {
            try MechanismURI.parse("otpauth://totp/A:b%0Aevil?secret=JBSWY3DP")
        }
        #expect(throws: URIParseError.invalidParameter(name: "label", reason: "it is longer than 255 bytes (UTF-8)")) {
            try MechanismURI.parse("otpauth://totp/A:" + String(repeating: "x", count: 300) + "?secret=JBSWY3DP")
        }
        #expect(throws: URIParseError.self) { try MechanismURI.parse("not a uri at all") }
        #expect(throws: URIParseError.self) { try MechanismURI.parse("") }
    }

    @Test("a pushauth URI: base64 endpoints, secret, challenge, cookie and issuer decoded")
    func pushauth() throws {
        let uri = "pushauth://push/forgerock:demo?\(pushParameters)&issuer=\(base64url("ForgeRock"))&b=032b75"
        let parsed = try MechanismURI.parse(uri, now: now)
        #expect(parsed.account.issuer == "ForgeRock")
        #expect(parsed.account.displayIssuer == "forgerock")
        #expect(parsed.account.backgroundColor == "#032b75")
        let push = try #require(parsed.mechanisms.first)
        #expect(push.type == .push)
        #expect(push.registrationEndpoint?.absoluteString == "https://am.example.com/json/push/sns/message?_action=register")
        #expect(push.authenticationEndpoint?.absoluteString == "https://am.example.com/json/push/sns/message?_action=authenticate")
        #expect(Data(base64Encoded: push.secret) == Data((0..<32).map { UInt8($0) }))
        #expect(push.messageId == "REGISTER-42")
        #expect(push.challenge == Data("challenge-bytes".utf8).base64EncodedString())
    }

    @Test("push parameters are validated", arguments: ["r", "a", "s", "c", "m"])
    func pushRequired(parameter: String) {
        let without = pushParameters.split(separator: "&").filter { !$0.hasPrefix("\(parameter)=") }.joined(separator: "&")
        #expect(throws: URIParseError.missingParameter(parameter)) {
            try MechanismURI.parse("pushauth://push/Issuer:demo?\(without)")
        }
    }

    @Test("bad push values are named")
    func pushInvalid() {
        let ftp = pushParameters.replacingOccurrences(of: "r=", with: "r=\(base64url("ftp://x.example"))&old=")
        #expect(throws: URIParseError.invalidParameter(name: "r", reason: "expected an http(s) URL, plain, percent-encoded or base64-encoded")) {
            try MechanismURI.parse("pushauth://push/Issuer:demo?\(ftp)")
        }
        let shortSecret = pushParameters.replacingOccurrences(of: "s=", with: "s=AAAA&old=")
        #expect(throws: URIParseError.invalidParameter(name: "s", reason: "expected a base64 shared secret of at least 16 bytes")) {
            try MechanismURI.parse("pushauth://push/Issuer:demo?\(shortSecret)")
        }
    }

    @Test("an mfauth URI gives a push and an OATH mechanism for one account")
    func mfauth() throws {
        let uri = "mfauth://totp/ForgeRock:demo?\(pushParameters)&secret=JBSWY3DPEHPK3PXP&digits=6&period=30"
            + "&issuer=\(base64url("ForgeRock"))&policies=\(base64url("{\"biometricAvailable\":{}}"))"
        let parsed = try MechanismURI.parse(uri)
        #expect(parsed.mechanisms.map(\.type) == [.push, .totp])
        #expect(Set(parsed.mechanisms.map(\.accountName)) == ["demo"])
        #expect(parsed.account.policies == "{\"biometricAvailable\":{}}")
        #expect(parsed.account.displayIssuer == nil)
        #expect(throws: URIParseError.invalidParameter(name: "policies", reason: "expected base64-encoded JSON")) {
            try MechanismURI.parse(uri.replacingOccurrences(of: "policies=", with: "policies=bm90IGpzb24&old="))
        }
    }
}
