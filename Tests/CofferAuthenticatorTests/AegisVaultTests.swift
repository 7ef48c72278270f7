import CofferAuthenticator
import Foundation
import TestSupport
import Testing

@Suite("Aegis vault import and export")
struct AegisVaultTests {
    let totp = "otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example&digits=8"
    let hotp = "otpauth://hotp/Bank:bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=5"
    let push = "pushauth://push/Push:carol?r=aHR0cHM6Ly9leGFtcGxlLmNvbS9y&a=aHR0cHM6Ly9leGFtcGxlLmNvbS9h&s=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8&c=Y2hhbGxlbmdl&m=reg-1"
    let time = Date(timeIntervalSince1970: 1_111_111_111)

    func filled() throws -> AuthenticatorClient {
        let client = AuthenticatorClient(storage: MemoryStorageClient(), clock: { [time] in time })
        for uri in [totp, hotp, push] { try client.addAccount(uri: uri) }
        return client
    }

    @Test("export then import, plain and encrypted, gives back the same accounts and codes", arguments: [nil, "correct horse"])
    func roundTrip(password: String?) throws {
        let source = try filled()
        let (entries, notExported) = source.exportAegis()
        #expect(entries.count == 2 && notExported == ["Push: carol (push)"], "push has no Aegis form and is reported")
        let file = try AegisVault.write(entries, password: password)
        if password != nil { #expect(String(decoding: file, as: UTF8.self).contains("GEZDGNBV") == false) }

        let target = AuthenticatorClient(storage: MemoryStorageClient(), clock: { [time] in time })
        let report = try target.importAegis(try AegisVault.read(file, password: password), overwrite: false)
        #expect(report.imported.count == 2 && report.skippedExisting.isEmpty && report.unsupported.isEmpty)
        func codes(_ client: AuthenticatorClient) throws -> [String] {
            try client.accounts().flatMap(\.mechanisms).filter { $0.type != .push }
                .sorted { $0.issuer < $1.issuer }.map { try client.code(for: $0).code }
        }
        #expect(try codes(target) == codes(source))
    }

    @Test("importing again skips existing entries unless --overwrite")
    func existingEntries() throws {
        let client = try filled()
        let entries = client.exportAegis().entries
        let again = try client.importAegis(entries, overwrite: false)
        #expect(again.imported.isEmpty && again.skippedExisting.count == 2)
        let overwritten = try client.importAegis(entries, overwrite: true)
        #expect(overwritten.imported.count == 2)
        #expect(client.accounts().flatMap(\.mechanisms).count == 3)
    }

    @Test("a vault written by an independent implementation imports; unsupported types are reported")
    func independentFixture() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("vault.json").path
        let script = TestKeyringRoot.url.appendingPathComponent("Tests/Helpers/make-aegis-vault.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")  // Debian's, with python3-cryptography
        process.arguments = [script, path, "fixture-password"]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3 with the cryptography package writes the fixture (scripts/install-deps installs it)")

        let client = AuthenticatorClient(storage: MemoryStorageClient(), clock: { [time] in time })
        let report = try client.importAegis(try AegisVault.read(Data(contentsOf: URL(fileURLWithPath: path)), password: "fixture-password"), overwrite: false)
        #expect(report.imported == ["Example: alice@example.com (totp)", "Bank: bob (hotp)", "Steam: gamer (steam)"])
        #expect(report.unsupported.isEmpty, "Steam entries are imported since issue 12")
        let mechanisms = client.accounts().flatMap(\.mechanisms)
        let totp = try #require(mechanisms.first { $0.type == .totp })
        #expect(try client.code(for: totp).code == "14050471", "RFC 6238 SHA-1 at T=1111111111")
        let hotp = try #require(mechanisms.first { $0.type == .hotp })
        #expect(try client.code(for: hotp).code == "254676", "RFC 4226 counter 5")

        #expect(throws: AegisVault.VaultError.wrongPassword) {
            try AegisVault.read(Data(contentsOf: URL(fileURLWithPath: path)), password: "wrong")
        }
    }

    @Test("wrong password, damage, missing password and unknown versions are clear errors")
    func errors() throws {
        let file = try AegisVault.write(try filled().exportAegis().entries, password: "pw")
        #expect(throws: AegisVault.VaultError.wrongPassword) { try AegisVault.read(file, password: "nope") }
        #expect(throws: AegisVault.VaultError.passwordRequired) { try AegisVault.read(file, password: nil) }

        var json = try JSONSerialization.jsonObject(with: file) as! [String: Any]
        var db = Data(base64Encoded: json["db"] as! String)!
        db[db.count / 2] ^= 1
        json["db"] = db.base64EncodedString()
        #expect(throws: AegisVault.VaultError.damaged("the entries do not decrypt with the vault's master key")) {
            try AegisVault.read(try JSONSerialization.data(withJSONObject: json), password: "pw")
        }
        json["version"] = 7
        #expect(throws: AegisVault.VaultError.unsupportedVersion("vault version 7")) {
            try AegisVault.read(try JSONSerialization.data(withJSONObject: json), password: "pw")
        }
        #expect(throws: AegisVault.VaultError.self) { try AegisVault.read(Data("{\"not\":\"a vault\"}".utf8), password: nil) }
        #expect(throws: AegisVault.VaultError.self) { try AegisVault.read(Data([0xFF, 0x00]), password: nil) }
    }

    @Test("a vault cannot make scrypt take gigabytes or run once per slot without end")
    func hostileScryptParameters() throws {
        let file = try AegisVault.write(try filled().exportAegis().entries, password: "pw", scryptRounds: 1 << 10)
        let json = try JSONSerialization.jsonObject(with: file) as! [String: Any]
        func withSlots(_ change: (inout [[String: Any]]) -> Void) throws -> Data {
            var copy = json
            var header = copy["header"] as! [String: Any]
            var slots = header["slots"] as! [[String: Any]]
            change(&slots)
            header["slots"] = slots
            copy["header"] = header
            return try JSONSerialization.data(withJSONObject: copy)
        }
        // 128 · 2^20 · 32 bytes would be 4 GiB.
        let huge = try withSlots { $0[0]["n"] = 1 << 20; $0[0]["r"] = 32 }
        let notPowerOfTwo = try withSlots { $0[0]["n"] = 1000 }
        let manySlots = try withSlots { slots in slots = Array(repeating: slots[0], count: 50) }
        for vault in [huge, notPowerOfTwo, manySlots] {
            do {
                _ = try AegisVault.read(vault, password: "pw")
                Issue.record("a hostile vault was read")
            } catch let AegisVault.VaultError.malformed(reason) {
                #expect(reason.contains("slot"))
            } catch {
                Issue.record("expected .malformed, got \(error)")
            }
        }
        #expect(try AegisVault.read(file, password: "pw").count == filled().exportAegis().entries.count)
    }

    @Test("an invalid entry is refused with why, never with its secret; the others are imported")
    func invalidEntryRefused() throws {
        var entries = try filled().exportAegis().entries
        entries[1].info.secret = "not base32 !!"
        let target = MemoryStorageClient()
        let client = AuthenticatorClient(storage: target)
        let report = try client.importAegis(entries, overwrite: false)
        #expect(report.imported.count == entries.count - 1)
        #expect(report.refused.count == 1 && report.refused[0].contains("'secret' parameter is invalid"))
        #expect(!report.refused[0].contains("not base32 !!"))
    }
}

/// The repository root, for helper scripts.
enum TestKeyringRoot {
    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
