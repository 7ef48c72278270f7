import CofferOath
import CofferStorage
import Foundation
import TestSupport
import Testing

/// The example of the CofferOath article "OathStorage and OathClient", verbatim.
@Suite("DocC: OathClient's HOTP counter memory")
struct DocOathCounterMemoryTests {
    @Test("removed and added again, a HOTP credential goes on from its counter")
    func counterMemory() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url

        let storage = try SQLiteOathStorage(path: folder.appendingPathComponent("oath.sqlite").path,
                                            encryptor: AESGCMEncryptor(keyAlias: "oath", keyStore: FileKeyStore(directory: folder)))
        let client = try await OathClient.createClient { $0.storage = storage }
        let uri = "otpauth://hotp/Bank:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank"
        let credential = try await client.addCredentialFromUri(uri)
        let first = try await client.generateCode(credential.id)    // "755224"; counter 1 stored first
        _ = try await client.deleteCredential(credential.id)        // its counter is remembered
        let again = try await client.addCredentialFromUri(uri)
        let next = try await client.generateCode(again.id)          // "287082", never "755224" again

        #expect(first == "755224" && next == "287082")
    }
}
