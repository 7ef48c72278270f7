@testable import CofferAuthenticator
import CofferStorage
import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

/// A storage that notes whether each listing runs outside any Swift task: on a thread of its
/// own, not on the cooperative pool (where the awaiting task's code runs).
final class QueueNotingStorageClient: ForwardingStorageClient, @unchecked Sendable {
    // @unchecked Sendable: the only state of its own is `offThePool`, behind a Mutex.
    let offThePool = Mutex<[Bool]>([])

    override func getAllAccounts() -> [Account] {
        let outsideTasks = withUnsafeCurrentTask { $0 == nil }
        offThePool.withLock { $0.append(outsideTasks) }
        return super.getAllAccounts()
    }
}

/// Issue 31, point 4: the client's async entry points do the same work as the synchronous ones,
/// off the cooperative pool (a blocking storage never holds one of its threads).
@Suite("AuthenticatorClient from async code")
struct AuthenticatorClientAsyncTests {
    static let uri = "otpauth://hotp/Bank:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank"

    @Test("add, list, code, rename, remove and restore awaited: RFC 4226's codes, and the storage called on a thread of its own, off the cooperative pool")
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
        let places = storage.offThePool.withLock { $0 }
        #expect(!places.isEmpty && places.allSatisfy { $0 }, "\(places)")
        let synchronous: (AuthenticatorClient) -> [AccountEntry] = { $0.accounts() }
        _ = synchronous(client)                                 // the synchronous twin, on this thread
        #expect(storage.offThePool.withLock { $0.last } == false, "the check can fail")
    }

    @Test("sixteen calls at once on an encrypted SQLite store all finish (a blocked call never holds the thread its sealing needs)",
          .timeLimit(.minutes(1)))
    func manyAtOnce() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let storage = try SQLiteStorageClient(path: temporary.url.appendingPathComponent("a.sqlite").path,
                                              encryptor: AESGCMEncryptor(keyAlias: "a", keyStore: FileKeyStore(directory: temporary.url)))
        let client = AuthenticatorClient(storage: storage)
        _ = try await client.addAccount(uri: Self.uri)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<16 {
                group.addTask { index.isMultiple(of: 2) ? await client.accounts().count : try await client.exportAccounts().accounts.count }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts == Array(repeating: 1, count: 16))
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
