import CofferAuthenticator
import CofferMFACommons
import CofferOath
import Foundation
import Logging
import Testing

// The README's examples for CofferOath, verbatim (ReadmeExamplesTests checks they match).
@Suite("README: Ping's OathClient")
struct ReadmeOathTests {
    @Test("README: OathClient with a memory storage")
    func client() async throws {
        let client = try await OathClient.createClient { config in
            config.storage = MemoryOathStorage()
            config.enableCredentialCache = false
        }
        let credential = try await client.addCredentialFromUri(
            "otpauth://hotp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example")
        let code = try await client.generateCode(credential.id)  // "755224"; the counter is stored first
        #expect(code == "755224")
        #expect(try await client.getCredential(credential.id)?.counter == 1)
    }
}
