import CofferMFATransfer
import CofferOath
import CofferStorage
import Foundation
import TestSupport
import Testing

/// The examples of the CofferMFATransfer article "Moving accounts in and out", verbatim.
@Suite("DocC: moving accounts in and out")
struct DocMovingAccountsTests {
    @Test("an andOTP backup into OathClient, and out again as an encrypted Aegis vault")
    func movingAccounts() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let exportPath = ImportFixtures.folder.appendingPathComponent("andotp.json").path
        let backupPath = temporary.url.appendingPathComponent("backup.json").path
        let vaultPassword = "correct horse"
        let storage = MemoryOathStorage()

        let data = try Data(contentsOf: URL(fileURLWithPath: exportPath))
        guard let format = ImportFormat.detect(data) else { throw ImportError.unknownFormat("its content matches none of them") }
        let contents = try format.read(data) { vaultPassword }
        let client = try await OathClient.createClient { $0.storage = storage }
        let report = try await client.importEntries(contents.entries)
        // report.imported, .skippedExisting, .unsupported (Steam: Ping has no Steam codes), .refused (with why)

        #expect(report.imported.count == 2 && report.unsupported.count == 1 && report.refused.isEmpty)

        let exported = try await client.exportAccounts()      // a policy-locked credential is left out, and named
        let vault = try AccountExport.write(exported.accounts, as: .aegis, password: vaultPassword)
        try vault.files[0].data.write(to: URL(fileURLWithPath: backupPath))

        let back = try ImportFormat.aegis.read(Data(contentsOf: URL(fileURLWithPath: backupPath))) { vaultPassword }
        #expect(back.entries.map(\.title).sorted() == report.imported.sorted())
    }
}
