import CofferAuthenticator
import Foundation
import TestSupport
import Testing

/// A mechanism, notification, import entry or vault entry printed, logged, debug-printed or dumped never shows its secret
/// or challenge (their doc comments promise it).
@Suite("Models never show secrets")
struct RedactionTests {
    @Test("a Mechanism hides its secret, and still says which mechanism it is")
    func mechanism() {
        let mechanism = Mechanism(issuer: "Example", accountName: "alice", type: .totp, secret: "SECRETSECRETSECRET")
        for text in renderings(of: mechanism) {
            #expect(!text.contains("SECRETSECRET"), "\(text)")
            #expect(text.contains("alice") && text.contains("<redacted>"), "\(text)")
        }
    }

    @Test("a PushNotification hides its challenge, and still says which notification it is")
    func notification() {
        let notification = PushNotification(messageId: "message-1", mechanismUUID: "M", challenge: "CHALLENGE-VALUE")
        for text in renderings(of: notification) {
            #expect(!text.contains("CHALLENGE-VALUE"), "\(text)")
            #expect(text.contains("message-1") && text.contains("<redacted>"), "\(text)")
        }
    }

    @Test("an ImportEntry hides the secret in its URI or fields, and keeps its title")
    func importEntry() {
        let uri = ImportEntry(title: "Example: alice (totp)", content: .uri("otpauth://totp/Example:alice?secret=SECRETSECRETSECRET"))
        let fields = ImportEntry.account(.init(type: "totp", issuer: "Example", accountName: "alice", secret: "SECRETSECRETSECRET"))
        for entry in [uri, fields] {
            for text in renderings(of: entry) + renderings(of: entry.content) {
                #expect(!text.contains("SECRETSECRET"), "\(text)")
                #expect(text.contains("<redacted>"), "\(text)")
            }
        }
    }

    @Test("an Aegis vault entry hides its secret")
    func aegisEntry() throws {
        let json = #"{"type": "totp", "uuid": "01234567-89ab-cdef-0123-456789abcdef", "name": "alice", "issuer": "Example","#
            + #""info": {"secret": "SECRETSECRETSECRET", "algo": "SHA1", "digits": 6, "period": 30}}"#
        let entry = try JSONDecoder().decode(AegisVault.Entry.self, from: Data(json.utf8))
        for text in renderings(of: entry) {
            #expect(!text.contains("SECRETSECRET"), "\(text)")
            #expect(text.contains("alice") && text.contains("<redacted>"), "\(text)")
        }
    }

    @Test("a Base32 error names the position, never the character (a part of the secret)")
    func base32() {
        #expect { _ = try Base32.decode("SECRET1SECRET") } throws: { error in
            renderings(of: error).allSatisfy { !$0.contains("\"1\"") && $0.contains("character 7") }
        }
    }

    @Test("a URI error quotes a scheme, type or parameter only when URIs use that word", arguments: [
        ("otpauth://SECRETSECRET/A:b?secret=JBSWY3DPEHPK3PXP", "type (after the scheme)"),
        ("SECRETSECRET:totp", "scheme is not supported"),
        ("otpauth://totp/A:b?secret=JBSWY3DPEHPK3PXP&SECRETSECRET&SECRETSECRET", "appears more than once"),
    ])
    func uriErrors(uri: String, says: String) {
        #expect { _ = try MechanismURI.parse(uri) } throws: { error in
            renderings(of: error).allSatisfy { !$0.lowercased().contains("secretsecret") && $0.contains(says) }
        }
        #expect { _ = try MechanismURI.parse("otpauth://yandex/A:b?secret=JBSWY3DPEHPK3PXP") } throws: { error in
            "\(error)".contains("type 'yandex'")
        }
        #expect { _ = try MechanismURI.parse("otpauth://totp/A:b?secret=JBSWY3DPEHPK3PXP&digits=6&digits=8") } throws: { error in
            "\(error)".contains("'digits' parameter")
        }
    }
}
