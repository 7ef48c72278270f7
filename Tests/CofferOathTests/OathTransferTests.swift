import CofferMFACommons
import CofferMFATransfer
import CofferOath
import CofferStorage
import Foundation
import Synchronization
import TestSupport
import Testing

/// Issue 31, point 2: Ping's `OathClient` imports other authenticators' exports and exports its
/// credentials, on the readers and writers the legacy generation uses.
@Suite("OathClient: imports and exports")
struct OathTransferTests {
    /// A client on a real SQLite file, sealed with a key file, in a fresh folder.
    func sqliteClient(_ folder: URL, _ configure: @escaping (OathConfiguration) -> Void = { _ in }) async throws -> (OathClient, SQLiteOathStorage) {
        let storage = try SQLiteOathStorage(path: folder.appendingPathComponent("oath.sqlite").path,
                                            encryptor: AESGCMEncryptor(keyAlias: "oath", keyStore: FileKeyStore(directory: folder)))
        let client = try await OathClient.createClient { config in
            config.storage = storage
            configure(config)
        }
        return (client, storage)
    }

    func read(_ fixture: String) throws -> [ImportEntry] {
        let data = try ImportFixtures.data(fixture)
        return try #require(ImportFormat.detect(data)).read(data) { "" }.entries
    }

    @Test("an export file: TOTP and HOTP imported with their secrets and counters, Steam reported unsupported", arguments: [
        "andotp.json", "2fas-plain.2fas", "google.txt", "bitwarden.json", "ente.txt", "freeotp-plus.json",
    ])
    func importsFixture(fixture: String) async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let (client, _) = try await sqliteClient(temporary.url)
        let report = try await client.importEntries(try read(fixture))
        #expect(report.refused.isEmpty, "\(report.refused)")
        #expect(report.imported.contains { $0.hasPrefix("Deno: Mason") } && report.imported.contains { $0.hasPrefix("Issuu: James") })
        #expect(report.unsupported.allSatisfy { $0.contains("steam") }, "\(report.unsupported)")
        let credentials = try await client.getCredentials()
        let deno = try #require(credentials.first { $0.issuer == "Deno" })
        // Ping keeps a secret as given (andOTP pads it): the same key either way.
        #expect(deno.secret.uppercased().filter { $0 != "=" } == "4SJHB4GSD43FZBAI7C2HLRJGPQ" && deno.oathType == .totp)
        let issuu = try #require(credentials.first { $0.issuer == "Issuu" })
        #expect(issuu.oathType == .hotp && issuu.counter == 1)
    }

    @Test("importing again skips; overwrite replaces with another secret and the replaced HOTP counter is remembered")
    func overwriteRemembersCounter() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let (client, _) = try await sqliteClient(temporary.url)
        let first = TransferAccount(type: "hotp", issuer: "Bank", accountName: "alice", secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        _ = try await client.importEntries([.account(first)])
        let id = try #require(try await client.getCredentials().first?.id)
        #expect(try await client.generateCode(id) == "755224")                   // RFC 4226, counter 0

        let again = try await client.importEntries([.account(first)])
        #expect(again.skippedExisting == ["Bank: alice (hotp)"] && again.imported.isEmpty)

        var other = first
        other.secret = "JBSWY3DPEHPK3PXP"
        let replacing = try await client.importEntries([.account(other)], overwrite: true)
        #expect(replacing.imported == ["Bank: alice (hotp)"] && replacing.replaced.map(\.id) == [id])
        #expect(try await client.getCredential(id)?.secret == "JBSWY3DPEHPK3PXP", "replaced under its id")

        // The first secret back (an old backup imported over it): its counter goes on.
        _ = try await client.importEntries([.account(first)], overwrite: true)
        #expect(try await client.generateCode(id) == "287082", "RFC 4226 counter 1: never 755224 again")
    }

    @Test("issue 33: two entries of one name with different secrets are two credentials; a note Ping cannot keep is named")
    func distinctSecretsAndDetails() async throws {
        let client = try await OathClient.createClient { $0.storage = MemoryOathStorage() }
        let personal = TransferAccount(type: "totp", issuer: "Mail", accountName: "me", secret: "JBSWY3DPEHPK3PXP",
                                       details: AccountDetails(note: "recovery: 1234"))
        var work = personal
        work.secret = "KRSXG5CTMVRXEZLU"
        work.details = nil
        let report = try await client.importEntries([.account(personal), .account(work)])
        #expect(report.imported.count == 2 && report.renamed == ["Mail: me (totp) as Mail: me (2)"], "\(report)")
        #expect(report.detailsNotKept == ["Mail: me (totp)"], "Ping's credential has no place for a note: \(report)")
        let names = Set(try await client.getCredentials().map(\.displayAccountName))
        #expect(names == ["me", "me (2)"])
        let again = try await client.importEntries([.account(personal), .account(work)])
        #expect(again.imported.isEmpty && again.skippedExisting.count == 2, "importing again adds nothing: \(again)")
    }

    @Test("an entry's UUID is the credential's id unless another credential has it; a HOTP secret held elsewhere is refused")
    func idsAndOneSecret() async throws {
        let client = try await OathClient.createClient { $0.storage = MemoryOathStorage() }
        let uuid = "0B4A5A4E-9D3C-4C43-8E0B-0D6E2C1B7A11"
        let a = TransferAccount(type: "totp", issuer: "A", accountName: "a", secret: "JBSWY3DPEHPK3PXP", uuid: uuid)
        let b = TransferAccount(type: "totp", issuer: "B", accountName: "b", secret: "KRSXG5CTMVRXEZLU", uuid: uuid.lowercased())
        let report = try await client.importEntries([.account(a), .account(b)])
        #expect(report.imported.count == 2 && report.renumbered == ["B: b (totp)"])
        let ids = Set(try await client.getCredentials().map(\.id))
        #expect(ids.contains(uuid) && ids.count == 2)

        let hotp = TransferAccount(type: "hotp", issuer: "C", accountName: "c", secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        var twin = hotp
        twin.accountName = "c2"
        let twins = try await client.importEntries([.account(hotp), .account(twin)])
        #expect(twins.imported == ["C: c (hotp)"] && twins.refused.count == 1 && twins.refused[0].hasPrefix("C: c2 (hotp): "))
        #expect(!twins.refused[0].contains("GEZDGNBV"), "no secret in the report")
    }

    @Test("what Ping's model cannot hold is reported, never stored: Steam, mOTP, push, a refused entry, a bad secret")
    func refusals() async throws {
        let storage = MemoryOathStorage()
        let client = try await OathClient.createClient { $0.storage = storage }
        let report = try await client.importEntries([
            .account(TransferAccount(type: "steam", issuer: "Steam", accountName: "s", secret: "JBSWY3DPEHPK3PXP")),
            .account(TransferAccount(type: "motp", issuer: "M", accountName: "m", secret: "JBSWY3DPEHPK3PXP")),
            ImportEntry(title: "Push: p (push)", content: .uri("pushauth://push/Push:p?r=aHR0cHM6Ly9leGFtcGxlLmNvbQ&s=x")),
            ImportEntry(title: "Odd: o (totp)", content: .refused("it is encrypted")),
            .account(TransferAccount(type: "totp", issuer: "Bad", accountName: "b", secret: "NOT1BASE32")),
        ])
        #expect(report.unsupported == ["Steam: s (steam)", "M: m (motp)", "Push: p (push)"])
        #expect(report.refused.count == 2 && report.refused[0].contains("it is encrypted"))
        #expect(report.refused[1].hasPrefix("Bad: b (totp): ") && !report.refused[1].contains("NOT1BASE32"))
        #expect(try await storage.getAllOathCredentials().isEmpty)
    }

    @Test("export, write as an encrypted Aegis vault, import into another client: the same codes")
    func exportRoundTrip() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let (source, _) = try await sqliteClient(temporary.url.appendingPathComponent("a").creatingDirectory())
        let totp = try await source.addCredentialFromUri("otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno&algorithm=SHA256&digits=8")
        let hotp = try await source.addCredentialFromUri("otpauth://hotp/Bank:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank")
        _ = try await source.generateCode(hotp.id)                                // counter 0 used

        let exported = try await source.exportAccounts()
        #expect(exported.notExported.isEmpty && exported.accounts.count == 2)
        let vault = try AccountExport.write(exported.accounts, as: .aegis, password: "correct horse").files[0].data
        let entries = try ImportFormat.aegis.read(vault) { "correct horse" }.entries

        let (target, _) = try await sqliteClient(temporary.url.appendingPathComponent("b").creatingDirectory())
        let report = try await target.importEntries(entries)
        #expect(report.imported.count == 2 && report.renumbered.isEmpty)
        #expect(try await target.generateCode(hotp.id) == "287082", "the counter travelled: counter 1, the same id")
        let moved = try #require(try await target.getCredential(totp.id))
        #expect(moved.digits == 8 && moved.oathAlgorithm == .sha256 && moved.secret == totp.secret)
    }

    @Test("a credential a policy locked is not exported (its codes are not to be made anywhere), and is named")
    func lockedNotExported() async throws {
        let compliant = Mutex(true)
        let client = try await OathClient.createClient { config in
            config.storage = MemoryOathStorage()
            config.policyEvaluator = MfaPolicyEvaluator.create { $0.policies = [ExportSwitchPolicy { compliant.withLock { $0 } }] }
        }
        let policies = Data(#"{"switch":{}}"#.utf8).base64EncodedString()
        _ = try await client.addCredentialFromUri("otpauth://totp/P:a?secret=JBSWY3DPEHPK3PXP&policies=\(policies)")
        _ = try await client.addCredentialFromUri("otpauth://totp/Q:b?secret=KRSXG5CTMVRXEZLU")
        compliant.withLock { $0 = false }
        let exported = try await client.exportAccounts()
        #expect(exported.accounts.map(\.issuer) == ["Q"])
        #expect(exported.notExported == ["P: a (totp): the policy 'switch' locked it"])
    }
}

/// Found by the attack review of the change (issue 31, point 2).
@Suite("OathClient: imports and exports, attacked")
struct OathTransferAttackTests {
    /// A storage with only the five protocol methods (no counter ledger, no atomic update),
    /// whose `failAt`-th store fails as a full disk would.
    final class FailingOathStorage: OathStorage, @unchecked Sendable {
        // @unchecked Sendable: `stores` is behind a Mutex; `inner` is an actor-safe storage.
        let inner = MemoryOathStorage()
        let failAt: Int
        let stores = Mutex(0)
        init(failAt: Int = .max) { self.failAt = failAt }
        func storeOathCredential(_ credential: OathCredential) async throws {
            let count = stores.withLock { $0 += 1; return $0 }
            if count == failAt { throw OathStorageError.storageFailure("No space left on device", nil) }
            try await inner.storeOathCredential(credential)
        }
        func retrieveOathCredential(credentialId: String) async throws -> OathCredential? { try await inner.retrieveOathCredential(credentialId: credentialId) }
        func getAllOathCredentials() async throws -> [OathCredential] { try await inner.getAllOathCredentials() }
        func removeOathCredential(credentialId: String) async throws -> Bool { try await inner.removeOathCredential(credentialId: credentialId) }
        func clearOathCredentials() async throws { try await inner.clearOathCredentials() }
    }

    @Test("a storage failing halfway: the error hands back what was replaced, nothing is lost without a word")
    func interrupted() async throws {
        let storage = FailingOathStorage(failAt: 3)
        let client = try await OathClient.createClient { $0.storage = storage }
        _ = try await client.addCredentialFromUri("otpauth://totp/A:a?secret=JBSWY3DPEHPK3PXP&issuer=A")          // store 1
        let replacing = TransferAccount(type: "totp", issuer: "A", accountName: "a", secret: "KRSXG5CTMVRXEZLU")  // store 2
        let next = TransferAccount(type: "totp", issuer: "B", accountName: "b", secret: "KRSXG5CTMVRXEZLU")       // store 3 fails
        do {
            _ = try await client.importEntries([.account(replacing), .account(next)], overwrite: true)
            Issue.record("the failing store was not reported")
        } catch let error as OathImportInterrupted {
            #expect(error.entry == "B: b (totp)" && error.report.imported == ["A: a (totp)"])
            #expect(error.report.replaced.map(\.secret) == ["JBSWY3DPEHPK3PXP"], "the replaced secret is handed back")
            #expect(error.errorDescription?.contains("No space left on device") == true)
        }
    }

    @Test("overwrite with the same HOTP secret at a lower counter keeps the higher one, on a storage without a ledger")
    func overwriteKeepsCounterWithoutLedger() async throws {
        let client = try await OathClient.createClient { $0.storage = FailingOathStorage() }
        let credential = try await client.addCredentialFromUri("otpauth://hotp/Bank:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank&counter=5")
        let old = TransferAccount(type: "hotp", issuer: "Bank", accountName: "alice", secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", counter: 0)
        let report = try await client.importEntries([.account(old)], overwrite: true)
        #expect(report.imported.count == 1)
        #expect(try await client.getCredential(credential.id)?.counter == 5)
        #expect(try await client.generateCode(credential.id) == "254676", "RFC 4226 counter 5, not 755224 (counter 0)")
    }

    @Test("a refusal never quotes a secret pasted as the algorithm, and an issuer with terminal escapes is refused")
    func hostileFields() async throws {
        let storage = MemoryOathStorage()
        let client = try await OathClient.createClient { $0.storage = storage }
        let pasted = TransferAccount(type: "totp", issuer: "A", accountName: "a", secret: "JBSWY3DPEHPK3PXP", algorithm: "KRSXG5CTMVRXEZLUKN2XAZLSKNSWG4TFOQ")
        let report = try await client.importEntries([
            .account(pasted),
            ImportEntry(title: "E: e (totp)", content: .uri("otpauth://totp/e?secret=JBSWY3DPEHPK3PXP&issuer=%1B%5D0;x%07")),
        ])
        #expect(report.refused.count == 2, "\(report.refused)")
        #expect(!report.refused.joined().contains("KRSXG5CTMVRXEZLU"))
        #expect(!report.refused.joined().contains("\u{1B}"))
        #expect(try await storage.getAllOathCredentials().isEmpty)
        await #expect(throws: OathError.self) { try await client.addCredentialFromUri("otpauth://totp/e?secret=JBSWY3DPEHPK3PXP&issuer=%1B%5D0;x%07") }
    }

    @Test("exported under its shown names and a lower-case id, a credential imports back onto itself")
    func roundTripOntoItself() async throws {
        let storage = MemoryOathStorage()
        let client = try await OathClient.createClient { $0.storage = storage }
        let id = UUID().uuidString.lowercased()
        var credential = OathCredential(id: id, issuer: "Bank", accountName: "alice", oathType: .totp, secretKey: "JBSWY3DPEHPK3PXP")
        credential.displayAccountName = "Alice (work)"
        _ = try await client.saveCredential(credential)
        let exported = try await client.exportAccounts().accounts
        #expect(exported.first?.uuid == id, "the id travels as it is")

        let again = try await client.importEntries(exported.map(ImportEntry.account))
        #expect(again.skippedExisting.count == 1 && again.renumbered.isEmpty)
        let replaced = try await client.importEntries(exported.map(ImportEntry.account), overwrite: true)
        #expect(replaced.replaced.map(\.id) == [id] && replaced.renumbered.isEmpty)
        #expect(try await storage.getAllOathCredentials().count == 1)

        let fresh = try await OathClient.createClient { $0.storage = MemoryOathStorage() }
        _ = try await fresh.importEntries(exported.map(ImportEntry.account))
        #expect(try await fresh.getCredential(id) != nil, "a fresh client keeps the id, case and all")
    }

    @Test("Steam, mOTP and push URIs are unsupported, not refused; a refused entry keeps its own words")
    func unsupportedURIs() async throws {
        let client = try await OathClient.createClient { $0.storage = MemoryOathStorage() }
        let report = try await client.importEntries([
            ImportEntry(title: "S: s (steam)", content: .uri("otpauth://steam/S:s?secret=JBSWY3DPEHPK3PXP")),
            ImportEntry(title: "M: m (motp)", content: .uri("otpauth://motp/M:m?secret=JBSWY3DPEHPK3PXP")),
            ImportEntry(title: "R: r (totp)", content: .refused("it is in Ente's trash")),
        ])
        #expect(report.unsupported == ["S: s (steam)", "M: m (motp)"])
        #expect(report.refused == ["R: r (totp): it is in Ente's trash"])
    }
}

/// A policy a test turns on and off.
private struct ExportSwitchPolicy: MfaPolicy {
    let name = "switch"
    let compliant: @Sendable () -> Bool
    func evaluate(data: [String: Any]?) async throws -> Bool { compliant() }
}

private extension URL {
    /// This folder, created (0700).
    func creatingDirectory() throws -> URL {
        try FileManager.default.createDirectory(at: self, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return self
    }
}
