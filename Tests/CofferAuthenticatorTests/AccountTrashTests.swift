import CofferAuthenticator
import CofferStorage
import Foundation
import Synchronization
import TestSupport
import Testing

/// Issue 31, point 1: the trash is the library's. A program using `AuthenticatorClient` alone
/// can undo a removal, a replacement, an import's overwrite and a rename, and the counters of
/// what the trash kept and forgot still count.
@Suite("AuthenticatorClient's trash: undo for every library user")
struct AccountTrashTests {
    /// RFC 4226's key and its codes for counters 0 to 5.
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    static let codes = ["755224", "287082", "359152", "969429", "338314", "254676"]
    static let hotp = "otpauth://hotp/Bank:alice?secret=\(secret)&issuer=Bank&counter=0"

    actor Ledger: HOTPCounterLedger {
        var counters: [String: UInt64] = [:]
        func rememberedCounters() async throws -> [String: UInt64] { counters }
        func remember(_ more: [String: UInt64]) async throws { counters = counters.raised(by: more) }
    }

    static func client(trash: any AccountTrash, ledger: Ledger = Ledger()) -> AuthenticatorClient {
        AuthenticatorClient(storage: MemoryStorageClient(), ledger: ledger, trash: trash)
    }

    @Test("remove keeps the account in the trash; restore brings it back with its counter, and the codes go on")
    func removeAndRestore() throws {
        let client = Self.client(trash: MemoryTrash())
        let entry = try client.addAccount(uri: Self.hotp)
        for _ in 0..<2 { _ = try client.code(for: entry.mechanisms[0]) }
        let id = try #require(try client.removeAccount(entry.account))
        #expect(client.accounts().isEmpty)
        let kept = try #require(try client.trash?.entries().first)
        #expect(kept.id == id && kept.reason == "removed" && kept.mechanisms.first?.counter == 2)

        let restored = try client.restore(trashID: id.uppercased())
        #expect(restored.id == id)
        #expect(try client.trash?.entries().isEmpty == true, "a restored entry is forgotten")
        let back = try #require(client.accounts().first?.mechanisms.first)
        #expect(try client.code(for: back).code == Self.codes[2])
    }

    @Test("a replacing add keeps what it replaced; restore refuses to clobber, and with replacing swaps them back")
    func replaceAndRestore() throws {
        let client = Self.client(trash: MemoryTrash())
        _ = try client.addAccount(uri: "otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail")
        let (_, replaced, id) = try client.replaceAccount(uri: "otpauth://totp/Mail:ann?secret=KRSXG5CTMVRXEZLU&issuer=Mail")
        #expect(replaced.count == 1)
        let trashID = try #require(id)
        #expect { try client.restore(trashID: trashID) } throws: { error in
            guard case .restoreClash(.totp, "Mail", "ann", trashID)? = error as? AuthenticatorError else { return false }
            return true
        }
        #expect(client.accounts().first?.mechanisms.first?.secret == "KRSXG5CTMVRXEZLU", "nothing changed")
        try client.restore(trashID: trashID, replacing: true)
        #expect(client.accounts().first?.mechanisms.first?.secret == "JBSWY3DPEHPK3PXP")
        let swapped = try #require(try client.trash?.entries().first)
        #expect(swapped.reason == "replaced by restore" && swapped.mechanisms.first?.secret == "KRSXG5CTMVRXEZLU")
    }

    @Test("rename keeps the old names; restore puts them back; bad names are refused with why")
    func renameAndRestore() throws {
        let client = Self.client(trash: MemoryTrash())
        let entry = try client.addAccount(uri: Self.hotp)
        let (renamed, id) = try client.rename(entry.account, issuer: "My bank", accountName: nil)
        #expect(renamed.shownIssuer == "My bank")
        try client.restore(trashID: try #require(id))
        #expect(client.accounts().first?.account.shownIssuer == "Bank")
        #expect { try client.rename(entry.account, issuer: "  ", accountName: nil) } throws: { error in
            guard case .invalidName(let reason)? = error as? AuthenticatorError else { return false }
            return reason.contains("empty")
        }
        #expect(throws: AuthenticatorError.self) { try client.rename(entry.account, issuer: "Evil\u{1B}[2J", accountName: nil) }
    }

    @Test("an overwriting import keeps what it replaced, an entry per account")
    func importOverwrite() throws {
        let client = Self.client(trash: MemoryTrash())
        _ = try client.addAccount(uri: "otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail")
        let report = try client.importEntries([ImportEntry(title: "Mail: ann", content: .uri("otpauth://totp/Mail:ann?secret=KRSXG5CTMVRXEZLU&issuer=Mail"))],
                                              overwrite: true)
        #expect(report.trashed.count == 1 && report.trashed.first?.account.issuer == "Mail")
        let entry = try #require(try client.trash?.entries().first)
        #expect(entry.reason == "overwritten by import" && entry.mechanisms.first?.secret == "JBSWY3DPEHPK3PXP")
    }

    @Test("an entry past its time is purged, and its HOTP counter stays remembered: re-added, the codes go on")
    func purgeRemembers() throws {
        let ledger = Ledger()
        let trash = MemoryTrash(keepDays: 0, ledger: ledger)
        let client = Self.client(trash: trash, ledger: ledger)
        let entry = try client.addAccount(uri: Self.hotp)
        for _ in 0..<3 { _ = try client.code(for: entry.mechanisms[0]) }
        try client.removeAccount(entry.account)
        #expect(try trash.entries(now: Date().addingTimeInterval(1)).isEmpty, "kept 0 days: gone at the next look")
        let back = try client.addAccount(uri: Self.hotp)
        #expect(try client.code(for: back.mechanisms[0]).code == Self.codes[3])
    }

    @Test("without a trash, restore says so and removals are final")
    func noTrash() throws {
        let client = AuthenticatorClient(storage: MemoryStorageClient(), ledger: nil)
        let entry = try client.addAccount(uri: Self.hotp)
        #expect(try client.removeAccount(entry.account) == nil)
        #expect { try client.restore(trashID: "00000000") } throws: { error in
            if case .noTrash? = error as? AuthenticatorError { return true } else { return false }
        }
    }

    @Test("the SQLite store's trash: files 0600 in a 0700 directory, sealed; a file swapped over another is named, not restored")
    func sealedDirectory() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStorageClient(path: directory.appending("authenticator.sqlite").path,
                                            encryptor: AESGCMEncryptor(keyAlias: "k", keyStore: FileKeyStore(directory: directory.appending("keys"))))
        let trash = SealedTrashDirectory(dataDirectory: directory.url, store: store)
        let client = AuthenticatorClient(storage: store, ledger: trash.ledger, trash: trash)
        let first = try client.addAccount(uri: Self.hotp)
        let second = try client.addAccount(uri: "otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail")
        let a = try #require(try client.removeAccount(first.account)), b = try #require(try client.removeAccount(second.account))
        #expect(try permissions(of: trash.directory) == 0o700)
        #expect(try permissions(of: trash.directory.appendingPathComponent(a)) == 0o600)
        let bytes = try Data(contentsOf: trash.directory.appendingPathComponent(a))
        #expect(!String(decoding: bytes, as: UTF8.self).contains(Self.secret) && !String(decoding: bytes, as: UTF8.self).contains("Bank"))
        // b's file renamed over a's: it opens, but holds another entry.
        try FileManager.default.removeItem(at: trash.directory.appendingPathComponent(a))
        try FileManager.default.copyItem(at: trash.directory.appendingPathComponent(b), to: trash.directory.appendingPathComponent(a))
        #expect(try trash.damaged().map(\.name) == [a])
        #expect { try client.restore(trashID: a) } throws: { error in
            guard case .trashEntryUnreadable(a, let why)? = error as? AuthenticatorError else { return false }
            return why.contains("swapped")
        }
        #expect(client.accounts().isEmpty, "nothing restored")
        try client.restore(trashID: b)
        #expect(client.accounts().map(\.account.issuer) == ["Mail"])
    }

    @Test("a replacement refused (the secret another account holds, an id another object holds) loses nothing, trash or not")
    func refusedReplacementLosesNothing() throws {
        let client = AuthenticatorClient(storage: MemoryStorageClient(), ledger: Ledger())  // no trash: keychain and PostgreSQL
        _ = try client.addAccount(uri: Self.hotp)
        _ = try client.addAccount(uri: "otpauth://hotp/Shop:bob?secret=JBSWY3DPEHPK3PXP&issuer=Shop")
        #expect(throws: AuthenticatorError.self) {
            try client.replaceAccount(uri: "otpauth://hotp/Bank:alice?secret=JBSWY3DPEHPK3PXP&issuer=Bank")
        }
        #expect(client.entries(matching: "Bank: alice").first?.mechanisms.first?.secret == Self.secret, "alice keeps her secret")
        let bob = try #require(client.entries(matching: "Shop: bob").first)
        var clashing = bob.mechanisms[0]
        clashing.secret = "KRSXG5CTMVRXEZLU"
        let alice = try #require(client.entries(matching: "Bank: alice").first)
        #expect(throws: AuthenticatorError.self, "bob's mechanism id under alice") {
            try client.add(account: alice.account, mechanism: Mechanism(mechanismUUID: clashing.mechanismUUID, issuer: "Bank", accountName: "alice",
                                                                        type: .hotp, secret: "KRSXG5CTMVRXEZLU"), replacing: true)
        }
        #expect(client.entries(matching: "Bank: alice").first?.mechanisms.first?.secret == Self.secret)
    }

    @Test("an overwriting import with an entry refused later in the file keeps what it replaced in the trash, and names the refused one")
    func importFailingLater() throws {
        let client = Self.client(trash: MemoryTrash())
        _ = try client.addAccount(uri: "otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail")
        _ = try client.addAccount(uri: "otpauth://hotp/Shop:bob?secret=MFRGGZDFMZTWQ2LK&issuer=Shop")
        let entries = [ImportEntry(title: "Mail: ann", content: .uri("otpauth://totp/Mail:ann?secret=KRSXG5CTMVRXEZLU&issuer=Mail")),
                       ImportEntry(title: "Bank: carl", content: .uri("otpauth://hotp/Bank:carl?secret=MFRGGZDFMZTWQ2LK&issuer=Bank"))]
        let report = try client.importEntries(entries, overwrite: true)
        #expect(report.refused.count == 1 && report.refused[0].hasPrefix("Bank: carl: The account Shop: bob holds this HOTP secret already"),
                "\(report.refused)")
        #expect(!report.isComplete && report.imported == ["Mail: ann"])
        let kept = try #require(try client.trash?.entries().first)
        #expect(kept.reason == "overwritten by import" && kept.mechanisms.first?.secret == "JBSWY3DPEHPK3PXP", "ann's old secret can be restored")
    }

    @Test("a removed account with no mechanisms comes back on restore")
    func restoreBareAccount() throws {
        let store = MemoryStorageClient()
        let client = AuthenticatorClient(storage: store, ledger: nil, trash: MemoryTrash())
        #expect(store.setAccount(account: Account(issuer: "Bare", accountName: "bob")))
        let id = try #require(try client.removeAccount(Account(issuer: "Bare", accountName: "bob")))
        #expect(client.accounts().isEmpty)
        try client.restore(trashID: id)
        #expect(client.accounts().map(\.account.issuer) == ["Bare"])
    }

    /// A trash whose key cannot be used: what does not open is waiting, not damaged.
    final class KeylessTrash: AccountTrash {
        struct KeyGone: Error {}
        let keepDays = 30
        let ledger: (any HOTPCounterLedger)? = nil
        let deleted = Mutex<[String]>([])
        var unusableKey: (any Error)? { KeyGone() }
        func write(_ entry: TrashEntry, replacing: Bool) throws {}
        func readAll() throws -> (entries: [TrashEntry], damaged: [DamagedTrashEntry]) { ([], [DamagedTrashEntry(name: "0badc0de", why: "the key")]) }
        func delete(_ name: String) throws { deleted.withLock { $0.append(name) } }
    }

    @Test("empty() purges nothing while entries wait for a key that cannot be used; negative keeping times are 0")
    func emptyWaitsForKey() throws {
        let trash = KeylessTrash()
        #expect(throws: TrashWaitingForKey.self) { try trash.empty() }
        #expect(trash.deleted.withLock { $0 }.isEmpty)
        #expect(MemoryTrash(keepDays: -5).keepDays == 0)
    }
}
