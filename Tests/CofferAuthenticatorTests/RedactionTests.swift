import CofferAuthenticator
import Foundation
import Testing

/// A mechanism, notification, import entry or vault entry printed, logged, debug-printed or dumped never shows its secret
/// or challenge (their doc comments promise it).
@Suite("Models never show secrets")
struct RedactionTests {
    private func everyRendering(of value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return ["\(value)", String(describing: value), String(reflecting: value), dumped]
    }

    @Test("a Mechanism hides its secret, and still says which mechanism it is")
    func mechanism() {
        let mechanism = Mechanism(issuer: "Example", accountName: "alice", type: .totp, secret: "SECRETSECRETSECRET")
        for text in everyRendering(of: mechanism) {
            #expect(!text.contains("SECRETSECRET"), "\(text)")
            #expect(text.contains("alice") && text.contains("<redacted>"), "\(text)")
        }
    }

    @Test("a PushNotification hides its challenge, and still says which notification it is")
    func notification() {
        let notification = PushNotification(messageId: "message-1", mechanismUUID: "M", challenge: "CHALLENGE-VALUE")
        for text in everyRendering(of: notification) {
            #expect(!text.contains("CHALLENGE-VALUE"), "\(text)")
            #expect(text.contains("message-1") && text.contains("<redacted>"), "\(text)")
        }
    }

    @Test("an ImportEntry hides the secret in its URI or fields, and keeps its title")
    func importEntry() {
        let uri = ImportEntry(title: "Example: alice (totp)", content: .uri("otpauth://totp/Example:alice?secret=SECRETSECRETSECRET"))
        let fields = ImportEntry.account(.init(type: "totp", issuer: "Example", accountName: "alice", secret: "SECRETSECRETSECRET"))
        for entry in [uri, fields] {
            for text in everyRendering(of: entry) + everyRendering(of: entry.content) {
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
        for text in everyRendering(of: entry) {
            #expect(!text.contains("SECRETSECRET"), "\(text)")
            #expect(text.contains("alice") && text.contains("<redacted>"), "\(text)")
        }
    }
}
