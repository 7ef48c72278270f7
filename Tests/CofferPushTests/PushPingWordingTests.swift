import CofferPush
import Foundation
import Testing

/// Ping's words and shapes where code written for Ping's Push module reads them.
@Suite("Ping's Push wording")
struct PushPingWordingTests {
    @Test("a URI of another scheme is refused in Ping's words")
    func invalidScheme() async {
        let error = await #expect(throws: PushError.self) {
            _ = try await PushUriParser.parse("otpauth://push/Example:alice?r=aHR0cHM6Ly9leGFtcGxlLmNvbQ&a=aHR0cHM6Ly9leGFtcGxlLmNvbQ&s=c2VjcmV0")
        }
        guard case .invalidUri(let message)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(message == "Invalid URI scheme: otpauth, expected: pushauth or mfauth")
    }

    @Test("a credential without an issuer is written without an issuer parameter, and reads back")
    func formatWithoutIssuer() async throws {
        let credential = PushCredential(issuer: "", accountName: "user@example.com", serverEndpoint: "https://am.example.com/push",
                                        sharedSecret: "c2hhcmVkU2VjcmV0VmFsdWU=")
        let uri = try await PushUriParser.format(credential)
        #expect(!uri.contains("issuer=") && uri.contains("/user%40example.com?"))
        #expect(try await PushUriParser.parse(uri).accountName == "user@example.com")
    }

    @Test("customPushHandlers reads back what was set, handlers or not; the client uses only handlers")
    func customHandlersReadBack() {
        let config = PushConfiguration.build { config in
            config.customPushHandlers = ["CUSTOM": "not a handler"]
        }
        #expect(config.customPushHandlers.count == 1)
        #expect(config.customPushHandlers["CUSTOM"] as? String == "not a handler")
    }
}
