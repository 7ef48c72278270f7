import CofferAuthenticator
import CofferAuthMigration
import CofferOath
import CofferPush
import CofferStorage
import Foundation
import TestSupport
import Testing

/// The README's and the DocC articles' migration and storage examples, compiled and run.
@Suite("README: Ping's storages and the move from the StorageClient")
struct ReadmeMigrationTests {
    @Test("the migration example moves a legacy store and lists what it kept")
    func migrationExample() async throws {
        let legacyClient = MemoryStorageClient()
        AuthMigrationTests.legacyStore(legacyClient)
        let oathStorage = MemoryOathStorage(), pushStorage = MemoryPushStorage()

        let report = try await AuthMigration.move(from: legacyClient, oath: oathStorage, push: pushStorage, sourceName: "keychain")
        for kept in report.keptInSource {
            print("not moved, still in the legacy storage: \(kept)")
        }

        #expect(report.oathCredentials == 2 && report.keptInSource.count == 1)
        #expect(try await oathStorage.getAllOathCredentials().count == 2)
    }

    @Test("the article's SQLite example: a client on SQLiteOathStorage")
    func sqliteExample() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let databasePath = directory.appending("oath.sqlite").path
        let keyStore = FileKeyStore(directory: directory.url.appendingPathComponent("keys"))

        let storage = try SQLiteOathStorage(path: databasePath, encryptor: AESGCMEncryptor(keyAlias: "oath", keyStore: keyStore))
        let client = try await OathClient.createClient { config in
            config.storage = storage
        }

        let credential = try await client.addCredentialFromUri("otpauth://hotp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        #expect(try await client.generateCode(credential.id) == "755224")
    }
}
