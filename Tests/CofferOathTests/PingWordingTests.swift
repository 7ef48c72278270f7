@testable import CofferOath
import CofferMFACommons
import Foundation
import Synchronization
import Testing

/// Ping's words, where code written for Ping's Oath module reads them: the validation messages
/// of `OathCredential`, and the log lines of `OathClient` and `OathKeychainStorage`.
@Suite("Ping's Oath wording")
struct PingWordingTests {
    final class Lines: CofferMFACommons.Logger {
        let all = Mutex<[String]>([])
        func d(_ message: String) { all.withLock { $0.append("d " + message) } }
        func i(_ message: String) { all.withLock { $0.append("i " + message) } }
        func w(_ message: String, error: Error?) { all.withLock { $0.append("w " + message) } }
        func e(_ message: String, error: Error?) { all.withLock { $0.append("e " + message) } }
    }

    @Test("validation messages as Ping words them", arguments: [
        (OathCredential(issuer: "I", accountName: "a", oathType: .totp, digits: 3, secretKey: "JBSWY3DPEHPK3PXP"), "Digits must be between 4 and 8"),
        (OathCredential(issuer: "I", accountName: "a", oathType: .totp, period: 301, secretKey: "JBSWY3DPEHPK3PXP"), "Period must be between 1 and 300 seconds"),
        (OathCredential(issuer: "I", accountName: "a", oathType: .hotp, counter: -1, secretKey: "JBSWY3DPEHPK3PXP"), "Counter must be non-negative"),
        (OathCredential(issuer: String(repeating: "i", count: 257), accountName: "a", oathType: .totp, secretKey: "JBSWY3DPEHPK3PXP"), "Issuer exceeds maximum length of 256"),
    ])
    func validation(credential: OathCredential, message: String) {
        let error = #expect(throws: OathError.self) { try credential.validate() }
        guard case .invalidParameterValue(let said)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(said == message)
    }

    @Test("OathClient's log lines as Ping's: each operation, its outcome, never a secret")
    func clientLogLines() async throws {
        let lines = Lines()
        let client = try await OathClient.createClient { config in
            config.storage = MemoryOathStorage()
            config.logger = lines
        }
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        let credential = try await client.addCredentialFromUri("otpauth://totp/Example:alice?secret=\(secret)&issuer=Example")
        _ = try await client.getCredentials()
        _ = try await client.getCredential("missing")
        _ = try await client.generateCode(credential.id)
        _ = try await client.deleteCredential(credential.id)
        _ = try await client.deleteCredential("missing")
        await #expect(throws: (any Error).self) { try await client.addCredentialFromUri("otpauth://totp/Example:alice") }
        try await client.close()
        let all = lines.all.withLock { $0 }
        for expected in ["d OATH client initialized successfully", "d Adding credential from URI", "i Successfully added credential: Example",
                         "d Retrieved 1 credentials", "d Credential not found: missing",
                         "d Successfully generated code for credential: \(credential.id)",
                         "i Successfully deleted credential: \(credential.id)", "d Credential not found for deletion: missing",
                         "i OATH client closed successfully"] {
            #expect(all.contains(expected), "\(expected) missing from \(all)")
        }
        #expect(all.contains { $0.hasPrefix("e Failed to add credential from URI: ") })
        #expect(!all.joined().contains(secret))
    }
}
