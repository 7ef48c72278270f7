import CofferStorage
import Foundation
import TestSupport
import Testing

@Suite("TPM key store (a software TPM per test)", .enabled(if: SoftwareTPM.isAvailable))
struct TPMKeyStoreTests {
    @Test("create, get, rotate and delete; a new process-like store opens the same keys; the file is 0600 and holds no key")
    func lifecycle() async throws {
        let tpm = try await SoftwareTPM.start()
        defer { tpm.remove() }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = TPMKeyStore(directory: directory.appending("keys"), tpm: TrustedPlatformModule(tcti: tpm.tcti))
        #expect(try await store.primaryKey(for: "a") == nil)
        let first = try await store.createKey(for: "a")
        #expect(first.id == 1)
        #expect(try await store.createKey(for: "a").key == first.key)
        let second = try await store.rotateKey(for: "a")
        #expect(second.id == 2 && second.key != first.key)
        let reopened = TPMKeyStore(directory: directory.appending("keys"), tpm: TrustedPlatformModule(tcti: tpm.tcti))
        #expect(try await reopened.primaryKey(for: "a")?.key == second.key)
        #expect(try await reopened.key(for: "a", id: 1)?.key == first.key)
        let file = try store.fileURL(for: "a")
        #expect(file.lastPathComponent == "a.tpm-key")
        #expect(try permissions(of: file) == 0o600)
        #expect(try permissions(of: directory.appending("keys")) == 0o700)
        let bytes = try Data(contentsOf: file)
        for key in [first, second] {
            let material = key.key.withUnsafeBytes { Data($0) }
            #expect(bytes.range(of: material) == nil)
            #expect(String(decoding: bytes, as: UTF8.self).range(of: material.base64EncodedString()) == nil)
        }
        try await store.deleteKeys(for: "a")
        #expect(try await reopened.primaryKey(for: "a") == nil)
    }
}
