import CofferAuthenticator
import CofferStorage
import Foundation
import TestSupport
import Testing

/// The examples of the CofferAuthenticator article "Accounts and one-time codes", verbatim.
@Suite("DocC: Accounts and one-time codes")
struct DocAccountsAndCodesTests {
    @Test("the backend chosen as the tool chooses it; undo; the counter memory; a search")
    func backendTrashAndSearch() throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.appending("data")
        try PrivateFile.createDirectory(at: folder.path)

        let store = try AuthenticatorBackend.chosen(explicit: nil, directory: folder).open(directory: folder)
        let client = store.makeClient()   // the store's HOTP counter memory and trash wired in
        let entry = try client.addAccount(uri: "otpauth://hotp/Bank:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank")
        let first = try client.code(for: entry.mechanisms[0]).code   // "755224"
        let trashID = try client.removeAccount(entry.account)        // kept in the trash, its counter remembered
        try client.restore(trashID: trashID!)                        // back, counter and all
        let found = client.entries(matching: "bank")                 // what a person types

        #expect(first == "755224")
        #expect(found.count == 1)
        #expect(try client.code(for: found[0].mechanisms[0]).code == "287082", "the restored account goes on")
        let again = try client.removeAccount(found[0].account)
        _ = try client.trash?.empty()
        let readded = try client.addAccount(uri: "otpauth://hotp/Bank:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank")
        #expect(again != nil)
        #expect(try client.code(for: readded.mechanisms[0]).code == "359152", "emptied from the trash, the counter is still remembered")
    }
}
