import CofferAuthenticator
import Foundation
import Logging
import CofferStorage
import TestSupport
import Testing

// The README's authenticator examples, verbatim (CofferStorageTests checks that every README
// example appears in a test file).

@Suite("README authenticator examples")
struct ReadmeAuthenticatorTests {
    @Test("adding an account and generating a code")
    func addAndCode() throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url

        let storage = try SQLiteStorageClient(
            path: folder.appendingPathComponent("authenticator.sqlite").path,
            encryptor: AESGCMEncryptor(keyAlias: "authenticator", keyStore: FileKeyStore(directory: folder.appendingPathComponent("keys"))))
        let authenticator = AuthenticatorClient(storage: storage)

        let entry = try authenticator.addAccount(uri: "otpauth://totp/Example:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Example")
        let code = try authenticator.code(for: entry.mechanisms[0])
        print("\(entry.account.issuer): \(code.code), \(code.secondsRemaining() ?? 0)s left")

        for listed in authenticator.accounts() {
            print(listed.account.accountName, listed.mechanisms.map(\.type))
        }
        try authenticator.removeAccount(entry.account)

        let expected = try OathGenerator.totp(secret: Base32.decode("JBSWY3DPEHPK3PXP"), at: code.validFrom)
        #expect(code.code == expected.code)
        #expect(storage.isEmpty())
    }
}

/// In the FRAClient suite, which runs serially: FRAClient's state is process-wide.
extension FRAClientTests {
    @Test("README: FRAClient and AuthenticatorConfiguration")
    func staticFace() throws {
        FRAClient.reset()
        defer { FRAClient.reset() }

        FRAClient.setStorage(storage: MemoryStorageClient())
        FRAClient.start()

        let config = AuthenticatorConfiguration.build { config in
            config.storage = MemoryStorageClient()
            config.enableCredentialCache = false
            config.logger = Logger(label: "com.example.authenticator")
        }
        let client = try config.makeClient()

        #expect(FRAClient.shared != nil)
        #expect(client.logger.label == "com.example.authenticator")
    }
}
