import CofferAuthenticator
import CofferStorage
import Foundation
import TestSupport
import Testing

/// Issue 31, point 1 (a first step): the HOTP counter rule is the library's. A program using
/// `AuthenticatorClient` alone never issues a HOTP code twice across a remove and re-add, and
/// never holds one secret under two accounts.
@Suite("HOTPCounterFloor: the library keeps the HOTP counter rule")
struct HOTPCounterFloorTests {
    static let uri = "otpauth://hotp/Bank:bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank&counter=0"

    @Test("removed and re-added through AuthenticatorClient alone, on a SQLite store with its ledger, the secret goes on from its counter")
    func removeAndReAdd() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        func client() throws -> AuthenticatorClient {
            let store = try SQLiteStorageClient(path: directory.appending("authenticator.sqlite").path,
                                                encryptor: AESGCMEncryptor(keyAlias: "a", keyStore: FileKeyStore(directory: directory.appending("keys"))))
            return AuthenticatorClient(storage: store, ledger: SealedCounterLedgerFile(dataDirectory: directory.url, store: store))
        }
        let first = try client()
        let added = try first.addAccount(uri: Self.uri)
        #expect(try first.code(for: added.mechanisms[0]).code == "755224")
        #expect(try first.code(for: added.mechanisms[0]).code == "287082")
        try first.removeAccount(added.account)
        // Another process, the same store: the ledger remembers.
        let second = try client()
        let again = try second.addAccount(uri: Self.uri.replacingOccurrences(of: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", with: "gezdgnbvgy3tqojqgezdgnbvgy3tqojqaa"))
        #expect(again.mechanisms[0].counter == 2)
        #expect(try second.code(for: again.mechanisms[0]).code == "359152", "counter 2: no code issued again")
    }

    @Test("a secret another account holds is refused with HOTPCounterFloorError, on any storage (a spec-only one too)")
    func twinRefused() throws {
        let client = AuthenticatorClient(storage: MemoryStorageClient(), ledger: nil)
        _ = try client.addAccount(uri: Self.uri)
        #expect { try client.addAccount(uri: Self.uri.replacingOccurrences(of: "Bank:bob", with: "Other:eve").replacingOccurrences(of: "issuer=Bank", with: "issuer=Other")) } throws: { error in
            guard case .storageFailed(_, let cause?) = error as? AuthenticatorError, case .secretHeldBy(let holder)? = cause as? HOTPCounterFloorError else {
                return false
            }
            return holder.issuer == "Bank" && holder.accountName == "bob"
        }
        #expect(client.accounts().count == 1, "nothing stored")
    }

    @Test("a ledger that cannot be read stops a HOTP add, stores nothing; TOTP goes on")
    func unreadableLedger() throws {
        struct Broken: HOTPCounterLedger {
            struct Unreadable: Error {}
            func rememberedCounters() throws -> [String: UInt64] { throw Unreadable() }
            func remember(_ counters: [String: UInt64]) throws { throw Unreadable() }
        }
        let client = AuthenticatorClient(storage: MemoryStorageClient(), ledger: Broken())
        #expect { try client.addAccount(uri: Self.uri) } throws: { error in
            guard case .storageFailed(_, let cause?) = error as? AuthenticatorError, case .ledgerUnreadable? = cause as? HOTPCounterFloorError else {
                return false
            }
            return true
        }
        #expect(client.accounts().isEmpty)
        _ = try client.addAccount(uri: "otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail")
        #expect(client.accounts().count == 1)
    }
}
