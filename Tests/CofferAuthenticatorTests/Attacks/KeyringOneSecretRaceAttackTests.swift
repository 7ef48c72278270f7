import CofferAuthenticator
import CofferStorage
import Foundation
import TestSupport
import Testing

/// The rule that two accounts never hold one HOTP secret, on the keyring: four clients (each
/// with its own keyring client, as four processes have) add one secret under four names at
/// once; exactly one may win. Only SQLite's adds were serialized before (`SerializedAdds`).
@Suite("One HOTP secret, four keyring clients adding it at once", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct KeyringOneSecretRaceAttackTests {
    @Test("exactly one add succeeds in every round; the keyring holds one account with it")
    func fourAddsAtOnce() async throws {
        let encryptor = try SecuredKeyEncryptor.make(keyAlias: "org.coffer.tests.one-secret")
        for round in 0..<4 {
            let prefix = "org.coffer.tests.one-secret.\(UUID().uuidString.prefix(8))"
            let clients = (0..<4).map { _ in
                let storage = KeychainStorageClient(encryptor: encryptor, servicePrefix: prefix, timeout: .seconds(60))
                return AuthenticatorClient(storage: storage, ledger: storage)     // the store keeps its rules, as the tool's does
            }
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        (try? await client.addAccount(uri: "otpauth://hotp/Bank:user\(index)?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank")) != nil
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1, "round \(round): \(outcomes)")
            let listed = await clients[0].accounts()
            #expect(listed.count == 1, "round \(round): \(listed.map(\.account.accountName))")
            for entry in listed { _ = try? await clients[0].removeAccount(entry.account) }
        }
    }
}
