@testable import CofferAuthenticator
import CofferStorage
import Dispatch
import Foundation
import Synchronization
import Testing

/// A storage that notes whether each listing runs on the off-pool executor's queue (marked with
/// a queue-specific value, which only that queue's threads see).
final class QueueNotingStorageClient: ForwardingStorageClient, @unchecked Sendable {
    // @unchecked Sendable: the only state of its own is `onOffPoolQueue`, behind a Mutex.
    static let mark = DispatchSpecificKey<String>()
    let onOffPoolQueue = Mutex<[Bool]>([])

    override init(keepsPushDeviceToken: Bool = true) {
        OffPoolExecutor.shared.queue.setSpecific(key: Self.mark, value: "off-pool")
        super.init(keepsPushDeviceToken: keepsPushDeviceToken)
    }

    override func getAllAccounts() -> [Account] {
        let here = DispatchQueue.getSpecific(key: Self.mark) == "off-pool"
        onOffPoolQueue.withLock { $0.append(here) }
        return super.getAllAccounts()
    }
}

/// Issue 31, point 4: the client's async entry points do the same work as the synchronous ones,
/// off the cooperative pool (a blocking storage never holds one of its threads).
@Suite("AuthenticatorClient from async code")
struct AuthenticatorClientAsyncTests {
    static let uri = "otpauth://hotp/Bank:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank"

    @Test("add, list, code, rename, remove and restore awaited: RFC 4226's codes, and the storage called on the off-pool queue")
    func asyncEntryPoints() async throws {
        let storage = QueueNotingStorageClient()
        let client = AuthenticatorClient(storage: storage, trash: MemoryTrash())
        let entry = try await client.addAccount(uri: Self.uri)
        #expect(try await client.code(for: entry.mechanisms[0]).code == "755224")
        #expect(try await client.code(for: entry.mechanisms[0]).code == "287082")

        let listed = await client.accounts()
        #expect(listed.map(\.account.issuer) == ["Bank"])
        #expect(await client.entries(matching: "bank").count == 1)
        let renamed = try await client.rename(entry.account, issuer: "My Bank", accountName: nil)
        #expect(renamed.account.shownIssuer == "My Bank")

        let trashID = try #require(try await client.removeAccount(renamed.account))
        #expect(await client.accounts().isEmpty)
        _ = try await client.restore(trashID: trashID)
        let back = try #require(await client.accounts().first)
        #expect(try await client.code(for: back.mechanisms[0]).code == "359152", "the counter went on: RFC 4226 counter 2")

        let exported = await client.exportAccounts()
        #expect(exported.accounts.map(\.issuer) == ["My Bank"])
        let places = storage.onOffPoolQueue.withLock { $0 }
        #expect(!places.isEmpty && places.allSatisfy { $0 }, "\(places)")
        let synchronous: (AuthenticatorClient) -> [AccountEntry] = { $0.accounts() }
        _ = synchronous(client)                                 // the synchronous twin, on this thread
        #expect(storage.onOffPoolQueue.withLock { $0.last } == false, "the check can fail")
    }

    @Test("typed errors come through unchanged")
    func typedErrors() async {
        let client = AuthenticatorClient(storage: MemoryStorageClient())
        await #expect(throws: AuthenticatorError.self) { try await client.addAccount(uri: "otpauth://totp/A:b?secret=1") }
        do {
            _ = try await client.addAccount(uri: "otpauth://totp/A:b?secret=1")
        } catch {
            guard case .invalidURI(.invalidParameter(name: "secret", _)) = error else {
                Issue.record("\(error)")
                return
            }
        }
    }
}
