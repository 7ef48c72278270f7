import CofferAuthenticator
import Foundation
import TestSupport
import Testing

/// Issue 11: the enrolment URIs ForgeRock servers and other authenticators issue, read the way
/// the ForgeRock iOS and Android SDKs read them. One test per rule, with URIs that must be
/// accepted and URIs that must be refused.
@Suite("ForgeRock wire compatibility of enrolment URIs")
struct ForgeRockURIRulesTests {
    /// RFC 4226's test secret "12345678901234567890".
    let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    func base64url(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    func base64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    /// A push registration's parameters, with the challenge given as `challenge`.
    func push(challenge: String = Data("challenge-bytes".utf8).base64EncodedString()) -> String {
        "r=\(base64url("https://am.example.com/push?_action=register"))&a=\(base64url("https://am.example.com/push?_action=authenticate"))"
            + "&s=\(base64(String(repeating: "k", count: 32)))&c=\(challenge.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&m=REG-1"
    }

    func oath(_ uri: String) throws -> (account: Account, mechanism: Mechanism) {
        let parsed = try MechanismURI.parse(uri)
        return (parsed.account, try #require(parsed.mechanisms.last))
    }

    @Test("1: a HOTP URI without a counter starts at 0 (an empty counter too); a bad counter is still refused")
    func hotpCounterDefaults() throws {
        for uri in ["otpauth://hotp/Bank:bob?secret=\(secret)", "otpauth://hotp/Bank:bob?secret=\(secret)&counter="] {
            let (_, mechanism) = try oath(uri)
            #expect(mechanism.counter == 0)
            #expect(try OathGenerator.hotp(secret: Base32.decode(mechanism.secret), counter: mechanism.counter) == "755224",
                    "RFC 4226 counter 0")
        }
        #expect(try oath("otpauth://hotp/Bank:bob?secret=\(secret)&counter=7").mechanism.counter == 7)
        for bad in ["abc", "-1", "1.5", "9223372036854775807"] {
            #expect(throws: URIParseError.self, "counter=\(bad)") { try MechanismURI.parse("otpauth://hotp/Bank:bob?secret=\(secret)&counter=\(bad)") }
        }
        let mfauth = try MechanismURI.parse("mfauth://hotp/Bank:bob?\(push())&secret=\(secret)")
        #expect(mfauth.mechanisms.map(\.type) == [.push, .hotp] && mfauth.mechanisms[1].counter == 0)
    }

    @Test("2: no issuer: the label is both issuer and account; an empty label is Untitled; nothing at all is refused")
    func missingIssuer() throws {
        let badger = try oath("otpauth://totp/Badger?secret=\(secret)")
        #expect(badger.account.issuer == "Badger" && badger.account.accountName == "Badger")
        #expect(badger.mechanism.issuer == "Badger" && badger.mechanism.accountName == "Badger")
        let untitled = try oath("otpauth://totp/?secret=\(secret)&issuer=Shop")
        #expect(untitled.account.issuer == "Shop" && untitled.account.accountName == "Untitled")
        let emptyAccount = try oath("otpauth://totp/Shop:?secret=\(secret)")
        #expect(emptyAccount.account.issuer == "Shop" && emptyAccount.account.accountName == "Untitled")
        #expect(try oath("otpauth://totp?secret=\(secret)&issuer=Shop").account.accountName == "Untitled", "no path at all")
        for bad in ["otpauth://totp/?secret=\(secret)", "otpauth://totp?secret=\(secret)", "otpauth://totp/%20:%20?secret=\(secret)&issuer="] {
            #expect(throws: URIParseError.invalidParameter(name: "label", reason: "it names neither an issuer nor an account, and there is no issuer parameter"),
                    "\(bad)") { try MechanismURI.parse(bad) }
        }
    }

    @Test("3: an empty issuer= never overrides the label's issuer; a different one wins and the label's is shown")
    func emptyIssuerParameter() throws {
        let kept = try oath("otpauth://totp/Bank:alice?secret=\(secret)&issuer=")
        #expect(kept.account.issuer == "Bank" && kept.account.displayIssuer == nil)
        let onlyParameter = try oath("otpauth://totp/alice?secret=\(secret)&issuer=")
        #expect(onlyParameter.account.issuer == "alice" && onlyParameter.account.accountName == "alice")
        let wins = try oath("otpauth://totp/Old:alice?secret=\(secret)&issuer=New")
        #expect(wins.account.issuer == "New" && wins.account.displayIssuer == "Old" && wins.mechanism.issuer == "New")
        #expect(throws: URIParseError.self) { try MechanismURI.parse("otpauth://totp/Bank:alice?secret=\(secret)&issuer=a%0Ab") }
    }

    @Test("4: uid and oid are base64 (either alphabet, padding optional), decoded into the user and resource ids; raw when not base64")
    func userAndResourceIDs() throws {
        let uid = "id=demo,ou=user,dc=openam,dc=forgerock,dc=org", oid = "a1b2c3d4-resource?x"
        let decoded = try oath("otpauth://totp/Bank:alice?secret=\(secret)&uid=\(base64url(uid))&oid=\(base64url(oid))").mechanism
        #expect(decoded.uid == uid && decoded.resourceId == oid)
        let padded = try oath("otpauth://totp/Bank:alice?secret=\(secret)&uid=\(base64(uid))&oid=\(base64(oid))").mechanism
        #expect(padded.uid == uid && padded.resourceId == oid)
        // "demo" is valid base64, but of bytes that are not text; "not base64!" is not base64.
        let raw = try oath("otpauth://totp/Bank:alice?secret=\(secret)&uid=demo&oid=not%20base64!").mechanism
        #expect(raw.uid == "demo" && raw.resourceId == "not base64!")
        let none = try oath("otpauth://totp/Bank:alice?secret=\(secret)&uid=&oid=").mechanism
        #expect(none.uid == nil && none.resourceId == nil)
        #expect(throws: URIParseError.invalidParameter(name: "oid", reason: "it contains control characters")) {
            try MechanismURI.parse("otpauth://totp/Bank:alice?secret=\(secret)&oid=a%0Ab")
        }
        #expect(throws: URIParseError.invalidParameter(name: "uid", reason: "it contains control characters")) {
            try MechanismURI.parse("otpauth://totp/Bank:alice?secret=\(secret)&uid=\(base64url("a\u{7}b"))%0A")
        }
    }

    @Test("5: image is a URL, a percent-encoded URL or a base64 URL, on otpauth as on pushauth")
    func imageForms() throws {
        let image = "https://cdn.example.com/logo.png?size=64"
        let forms = [image.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                     image.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                     base64url(image), base64(image)]
        for form in forms {
            #expect(try oath("otpauth://totp/Bank:alice?secret=\(secret)&image=\(form)").account.imageURL == image, "\(form)")
            #expect(try MechanismURI.parse("pushauth://push/Bank:alice?\(push())&image=\(form)").account.imageURL == image, "\(form)")
        }
        for bad in ["ftp%3A%2F%2Fexample.com%2Fa.png", "not-a-url", base64url("javascript:alert(1)")] {
            #expect(throws: URIParseError.invalidParameter(name: "image", reason: "expected an http(s) URL, plain, percent-encoded or base64-encoded"),
                    "\(bad)") { try MechanismURI.parse("otpauth://totp/Bank:alice?secret=\(secret)&image=\(bad)") }
        }
    }

    @Test("6: version absent or 1 is accepted; any other version is refused, naming the parameter", arguments: [
        "otpauth://totp/Bank:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ",
        "pushauth://push/Bank:alice?",
        "mfauth://totp/Bank:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&",
    ])
    func version(base: String) throws {
        let uri = base.hasPrefix("otpauth") ? base : base + push()
        #expect(try MechanismURI.parse(uri).mechanisms.isEmpty == false)
        #expect(try MechanismURI.parse(uri + "&version=1").mechanisms.isEmpty == false)
        for bad in ["999", "a", "2", "1.0"] {
            #expect(throws: URIParseError.invalidParameter(name: "version", reason: "expected 1, the only version of the format Coffer knows"),
                    "version=\(bad)") { try MechanismURI.parse(uri + "&version=\(bad)") }
        }
    }

    @Test("7: pushauth's pid and uid are base64-decoded into the resource and user ids, raw when not base64")
    func pushIdentifiers() throws {
        let parsed = try MechanismURI.parse("pushauth://push/Bank:alice?\(push())&pid=\(base64url("push-resource-9"))&uid=\(base64("demo-user"))")
        let mechanism = try #require(parsed.mechanisms.first)
        #expect(mechanism.resourceId == "push-resource-9" && mechanism.uid == "demo-user")
        let raw = try #require(try MechanismURI.parse("pushauth://push/Bank:alice?\(push())&pid=r-1!&uid=demo").mechanisms.first)
        #expect(raw.resourceId == "r-1!" && raw.uid == "demo")
        #expect(throws: URIParseError.invalidParameter(name: "pid", reason: "it contains control characters")) {
            try MechanismURI.parse("pushauth://push/Bank:alice?\(push())&pid=a%09b")
        }
    }

    @Test("8: a base64url challenge is stored as standard base64 with padding; what is not base64 is refused")
    func challengeNormalised() throws {
        let bytes = Data([0xfb, 0xff, 0xfe, 0x3e, 0x3f, 0x00, 0x01])  // '+', '/' and padding in standard form
        let standard = bytes.base64EncodedString()
        #expect(standard.contains("+") && standard.contains("/") && standard.hasSuffix("="))
        let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        for form in [url, standard, standard.replacingOccurrences(of: "=", with: "")] {
            let mechanism = try #require(try MechanismURI.parse("pushauth://push/Bank:alice?\(push(challenge: form))").mechanisms.first)
            #expect(mechanism.challenge == standard, "\(form)")
        }
        #expect(throws: URIParseError.invalidParameter(name: "c", reason: "expected a base64 challenge")) {
            try MechanismURI.parse("pushauth://push/Bank:alice?\(push(challenge: "not*base64"))")
        }
        #expect(throws: URIParseError.missingParameter("c")) {
            try MechanismURI.parse("pushauth://push/Bank:alice?\(push(challenge: ""))")
        }
    }

    @Test("9: mfauth follows every rule in both parts")
    func mfauthBothParts() throws {
        let bytes = Data([0xfb, 0xff, 0xfe])
        let urlChallenge = "-__-"
        #expect(Data(base64Encoded: "+//+") == bytes)
        let uri = "mfauth://hotp/?\(push(challenge: urlChallenge))&secret=\(secret)&issuer=\(base64url("ForgeRock"))"
            + "&uid=\(base64url("demo"))&oid=\(base64url("oath-7"))&pid=\(base64url("push-7"))&image=\(base64url("https://x.example/i.png"))&version=1"
        let parsed = try MechanismURI.parse(uri)
        #expect(parsed.account.issuer == "ForgeRock" && parsed.account.accountName == "Untitled")
        #expect(parsed.account.imageURL == "https://x.example/i.png")
        let pushPart = parsed.mechanisms[0], oathPart = parsed.mechanisms[1]
        #expect(pushPart.type == .push && pushPart.challenge == "+//+" && pushPart.uid == "demo" && pushPart.resourceId == "push-7")
        #expect(oathPart.type == .hotp && oathPart.counter == 0 && oathPart.uid == "demo" && oathPart.resourceId == "oath-7")
        #expect(Set(parsed.mechanisms.map(\.accountName)) == ["Untitled"])
        #expect(throws: URIParseError.self) { try MechanismURI.parse(uri.replacingOccurrences(of: "version=1", with: "version=2")) }
        let labelled = try MechanismURI.parse("mfauth://totp/Bank:alice?\(push())&secret=\(secret)&issuer=")
        #expect(labelled.account.issuer == "Bank", "an empty issuer= does not override the label in mfauth either")
    }

    @Test("the coffer tool enrols the QR codes it used to refuse")
    func tool() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coffer = CofferProcess(dataDirectory: directory.url)
        let uris = "otpauth://hotp/Badger?secret=\(secret)\notpauth://totp/?secret=\(secret)&issuer=Shop&uid=\(base64url("demo"))\n"
        let added = try await coffer.run(["add", "-"], input: uris, environment: ["COFFER_BACKEND": "sqlite"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "Added Badger: Badger (HOTP)\nAdded Shop: Untitled (TOTP)\n")
        #expect(try await coffer.run(["code", "badger"]).stdout == "Badger: Badger  755224\n", "counter 0")
        let refused = try await coffer.run(["add", "-"], input: "otpauth://totp/Bank:alice?secret=\(secret)&version=2\n")
        #expect(refused.status == 1 && refused.stderr.contains("'version'"), "\(refused.stderr)")
    }

    @Test("what Coffer writes back (otpauth for a phone, vault export) reads back as the same mechanism, ids included")
    func roundTrip() throws {
        let uris = [
            "otpauth://hotp/Bank?secret=gezd-gnbv-gy3t-qojq-gezd-gnbv-gy3t-qojq====&uid=\(base64url("u:1"))&oid=\(base64url("o/2"))",
            "otpauth://totp/?issuer=Sh%3Aop&secret=\(secret)&algorithm=SHA512&digits=8&period=60",
            "otpauth://totp/J%C3%BCrgen%20GmbH:j%40example.com?secret=\(secret)&digits=7&uid=demo",
        ]
        for uri in uris {
            let first = try oath(uri).mechanism
            let again = try oath(MechanismURI.otpauth(first)).mechanism
            #expect(again.issuer == first.issuer && again.accountName == first.accountName && again.secret == first.secret)
            #expect(again.type == first.type && again.algorithm == first.algorithm && again.digits == first.digits)
            #expect(again.period == first.period && again.counter == first.counter)
            #expect(again.uid == first.uid && again.resourceId == first.resourceId, "\(uri)")
        }
        #expect(try oath(uris[0]).mechanism.secret == secret, "Base32 is written upper-case without padding or separators")
    }
}
