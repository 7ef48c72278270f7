import CofferAuthenticator
import Foundation
import CofferStorageTesting
import CofferAuthenticatorTesting
import Testing

@Suite("StorageClient conformance")
struct StorageClientConformanceTests {
    @Test("MemoryStorageClient conforms")
    func memory() async throws {
        try await StorageClientConformance(makeClient: { MemoryStorageClient() }).run()
    }
}
