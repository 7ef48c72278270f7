import Foundation
import TestSupport
import Testing

/// Issue 22: the PostgreSQL key-encryption key off the disk in the clear: sealed by the TPM
/// (`COFFER_DATABASE_KEK=tpm:FILE`) or given by systemd (`credential:NAME`).
@Suite("coffer --backend postgres with a TPM-sealed or systemd-credential key-encryption key",
       .enabled(if: TestPostgres.isRunning && SoftwareTPM.isAvailable, TestPostgres.skipReason))
struct PostgresSealedKEKTests {
    @Test("the same key sealed by the TPM and given as a credential opens the same accounts; another TPM and a missing credential are refused")
    func sealedAndCredential() async throws {
        let setup = try await PostgresToolTests.Setup()
        defer { setup.directory.remove() }
        let tpm = try await SoftwareTPM.start()
        let other = try await SoftwareTPM.start()
        defer { tpm.remove(); other.remove() }
        let plain = setup.directory.appending("plain/pg.kek").path
        let sealed = setup.directory.appending("etc/coffer/pg.tpm-key").path
        #expect(try await setup.coffer(["key", "new-kek", plain]).status == 0)
        let sealing = try await setup.coffer(["key", "new-kek", "--tpm", "--from", plain, sealed], ["COFFER_TPM_TCTI": tpm.tcti])
        #expect(sealing.status == 0 && sealing.stdout.contains("COFFER_DATABASE_KEK=tpm:"), "\(sealing.stdout) \(sealing.stderr)")
        #expect(try permissions(of: URL(fileURLWithPath: sealed)) == 0o600)
        #expect(try permissions(of: setup.directory.appending("etc/coffer")) == 0o700)
        let postgres = ["--backend", "postgres"]
        let uri = "otpauth://hotp/Bank:bob?secret=\(PostgresToolTests.secret)&counter=3\n"
        let byTPM = ["COFFER_DATABASE_KEK": "tpm:\(sealed)", "COFFER_TPM_TCTI": tpm.tcti]
        let added = try await setup.coffer(["add", "-"] + postgres, input: uri, byTPM)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try await setup.coffer(["code", "Bank", "--raw"] + postgres, byTPM).stdout == "969429\n")

        // A systemd credential: the plain key in $CREDENTIALS_DIRECTORY, as systemd gives it.
        let credentials = setup.directory.appending("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.copyItem(atPath: plain, toPath: credentials.appendingPathComponent("coffer-kek").path)
        let byCredential = ["COFFER_DATABASE_KEK": "credential:coffer-kek", "CREDENTIALS_DIRECTORY": credentials.path]
        #expect(try await setup.coffer(["code", "Bank", "--raw"] + postgres, byCredential).stdout == "338314\n",
                "the credential is the same key: the counter goes on")
        let noFolder = try await setup.coffer(["code", "Bank", "--raw"] + postgres, ["COFFER_DATABASE_KEK": "credential:coffer-kek"])
        #expect(noFolder.status == 1 && noFolder.stderr.contains("LoadCredentialEncrypted="), "\(noFolder.stderr)")
        let traversal = try await setup.coffer(["code", "Bank", "--raw"] + postgres,
                                               ["COFFER_DATABASE_KEK": "credential:../plain/pg.kek", "CREDENTIALS_DIRECTORY": credentials.path])
        #expect(traversal.status == 1 && traversal.stderr.contains("is not a credential name"), "\(traversal.stderr)")

        let elsewhere = try await setup.coffer(["code", "Bank", "--raw"] + postgres,
                                               ["COFFER_DATABASE_KEK": "tpm:\(sealed)", "COFFER_TPM_TCTI": other.tcti])
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("sealed by another TPM"), "\(elsewhere.stderr)")
        #expect(try await setup.coffer(["code", "Bank", "--raw"] + postgres, byTPM).stdout == "254676\n",
                "back on its own TPM, nothing lost: RFC 4226's code for counter 5")
    }
}
