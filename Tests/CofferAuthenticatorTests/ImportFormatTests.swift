import CofferAuthenticator
import CofferStorage
import Foundation
import TestSupport
import Testing

/// Issue 12.1 and 12.3: every export format, read from files built after each format's
/// published description (the apps' own sources; see the fixtures' names), recognised by
/// content, and the same three accounts out of each: Deno / Mason (TOTP), Issuu / James (HOTP,
/// next counter 1) and Boeing / Sophia (Steam), with the codes other implementations compute.
@Suite("Imports from other authenticators")
struct ImportFormatTests {
    func fixture(_ name: String) throws -> Data {
        try ImportFixtures.data(name)
    }

    /// 2023-01-01T00:00:00Z, when the vectors below were computed by other implementations.
    let instant = Date(timeIntervalSince1970: 1_672_531_200)

    func imported(_ name: String, password: String? = nil) throws -> (format: ImportFormat, report: VaultImportReport, mechanisms: [Mechanism]) {
        let data = try fixture(name)
        let format = try #require(ImportFormat.detect(data), "\(name) is recognised")
        let contents = try format.read(data) { guard let password else { throw ImportError.passwordRequired(format: format.name) }; return password }
        let storage = MemoryStorageClient()
        let client = AuthenticatorClient(storage: storage)
        var report = try client.importEntries(contents.entries, overwrite: false)
        report.notes += contents.notes
        return (format, report, client.accounts().flatMap(\.mechanisms))
    }

    func checkTheThree(_ mechanisms: [Mechanism], steam: Bool = true, hotpCounter: UInt64 = 1) throws {
        let deno = try #require(mechanisms.first { $0.issuer == "Deno" })
        #expect(deno.accountName == "Mason" && deno.type == .totp && deno.secret == "4SJHB4GSD43FZBAI7C2HLRJGPQ")
        #expect(try OathGenerator.totp(secret: Base32.decode(deno.secret), at: instant).code == "547265")
        let issuu = try #require(mechanisms.first { $0.issuer == "Issuu" })
        #expect(issuu.accountName == "James" && issuu.type == .hotp && issuu.counter == hotpCounter)
        #expect(issuu.secret == "YOOMIXWS5GN6RTBPUFFWKTW5M4")
        if steam {
            let sophia = try #require(mechanisms.first { $0.type == .steam })
            #expect(sophia.secret == "JRZCL47CMXVOQMNPZR2F7J4RGI" && sophia.digits == 5)
            #expect(try OathGenerator.steam(secret: Base32.decode(sophia.secret), at: instant).code == "B2MYW")
        }
    }

    @Test("3: Steam Guard codes match Bitwarden's and KeePassXC's vectors (the latter from the Steam app)", arguments: [
        ("HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ", 1_672_531_200.0, "7W6CJ"),
        ("63BEDWCQZKTQWPESARIERL5DTTQFCJTK", 1_511_200_518.0, "FR8RV"),
        ("63BEDWCQZKTQWPESARIERL5DTTQFCJTK", 1_511_200_714.0, "9P3VP"),
    ])
    func steamVectors(secret: String, time: Double, code: String) throws {
        #expect(try OathGenerator.steam(secret: Base32.decode(secret), at: Date(timeIntervalSince1970: time)).code == code)
    }

    @Test("3: Steam from otpauth://steam/, encoder=steam and an Aegis steam entry; SHA-256 or another period refused")
    func steamURIs() throws {
        let host = try MechanismURI.parse("otpauth://steam/Steam:gamer?secret=JRZCL47CMXVOQMNPZR2F7J4RGI")
        #expect(host.mechanisms[0].type == .steam && host.mechanisms[0].digits == 5)
        let encoder = try MechanismURI.parse("otpauth://totp/Steam:gamer?secret=JRZCL47CMXVOQMNPZR2F7J4RGI&encoder=steam&digits=5")
        #expect(encoder.mechanisms[0].type == .steam)
        #expect(throws: URIParseError.self) { try MechanismURI.parse("otpauth://steam/Steam:g?secret=JRZCL47CMXVOQMNPZR2F7J4RGI&algorithm=SHA256") }
        #expect(throws: URIParseError.self) { try MechanismURI.parse("otpauth://steam/Steam:g?secret=JRZCL47CMXVOQMNPZR2F7J4RGI&period=60") }
        let again = try MechanismURI.parse(MechanismURI.otpauth(host.mechanisms[0]))
        #expect(again.mechanisms[0].type == .steam, "written back as it reads")
        let client = AuthenticatorClient(storage: MemoryStorageClient(), clock: { Date(timeIntervalSince1970: 1_672_531_200) })
        let entry = try client.addAccount(uri: "otpauth://steam/Boeing:Sophia?secret=JRZCL47CMXVOQMNPZR2F7J4RGI")
        #expect(try client.code(for: entry.mechanisms[0]).code == "B2MYW")
        #expect(AegisVault.entry(account: entry.account, mechanism: entry.mechanisms[0])?.type == "steam")
    }

    @Test("1: Google Authenticator export: the protobuf payload, names split at ':', algorithm and digits")
    func google() throws {
        let (format, report, mechanisms) = try imported("google.txt")
        #expect(format == .google)
        #expect(report.imported.count == 2 && report.refused.isEmpty)
        try checkTheThree(mechanisms, steam: false)
        let sha512 = try imported("google-sha512.txt").mechanisms
        #expect(sha512.first?.issuer == "Airbnb" && sha512.first?.accountName == "Elijah")
        #expect(sha512.first?.algorithm == .sha512 && sha512.first?.digits == 8)
    }

    @Test("1: Google export in two QR codes: both read; one missing is said")
    func googleBatches() throws {
        let (_, report, mechanisms) = try imported("google-batches.txt")
        #expect(report.imported.count == 2 && report.notes.isEmpty)
        try checkTheThree(mechanisms, steam: false)
        let firstOnly = Data(try fixture("google-batches.txt").split(separator: UInt8(ascii: "\n"))[0])
        let contents = try ImportFormat.google.read(firstOnly) { "" }
        #expect(contents.entries.count == 1)
        #expect(contents.notes == ["this export is 2 QR codes and 1 of them (#2) are not in the file; import them too"])
    }

    @Test("1: Google export that is damaged: nothing is read", arguments: [
        "otpauth-migration://offline?data=CiUKEOSScPDSHzZ",        // cut short
        "otpauth-migration://offline?data=%%%",                     // not base64
        "otpauth-migration://offline",                              // no data
        "otpauth-migration://offline?data=//////////////8=",        // a varint that never ends
    ])
    func googleDamaged(line: String) {
        #expect(throws: ImportError.self) { try ImportFormat.google.read(Data(line.utf8)) { "" } }
    }

    @Test("1: 2FAS backup, plain, with a Steam entry")
    func twoFASPlain() throws {
        let (format, report, mechanisms) = try imported("2fas-plain.2fas")
        #expect(format == .twoFAS && report.imported.count == 3)
        try checkTheThree(mechanisms)
    }

    @Test("1: 2FAS backup, encrypted (PBKDF2-SHA256, AES-GCM): opens with its password; a wrong one reads nothing")
    func twoFASEncrypted() throws {
        let (format, report, mechanisms) = try imported("2fas-encrypted-password-test.2fas", password: "test")
        #expect(format == .twoFAS && report.imported.count == 3)
        try checkTheThree(mechanisms)
        #expect(throws: ImportError.wrongPassword(format: "2FAS backup")) { try imported("2fas-encrypted-password-test.2fas", password: "wrong") }
        #expect(throws: ImportError.passwordRequired(format: "2FAS backup")) { try imported("2fas-encrypted-password-test.2fas") }
    }

    @Test("1: andOTP plain backup (padded base32, STEAM type); an encrypted one is refused with what to do")
    func andOTP() throws {
        let (format, report, mechanisms) = try imported("andotp.json")
        #expect(format == .andOTP && report.imported.count == 3)
        try checkTheThree(mechanisms)
        #expect {
            try ImportFormat.andOTP.read(Data([0, 0, 0x27, 0x10] + (0..<60).map { UInt8($0) })) { "" }
        } throws: { error in
            (error as? LocalizedError)?.errorDescription?.contains("export a plain JSON backup") == true
        }
    }

    @Test("1: FreeOTP+ export (secrets as signed bytes, its HOTP counter one behind, Steam by issuer)")
    func freeOTPPlus() throws {
        let (format, report, mechanisms) = try imported("freeotp-plus.json")
        #expect(format == .freeOTPPlus && report.imported.count == 3)
        try checkTheThree(mechanisms)
    }

    @Test("1: Bitwarden export: URIs, a bare secret (the item's name and user), steam://; a password-protected export is refused")
    func bitwarden() throws {
        let (format, report, mechanisms) = try imported("bitwarden.json")
        #expect(format == .bitwarden && report.imported.count == 4, "the secure note is not an account")
        try checkTheThree(mechanisms)
        let bare = try #require(mechanisms.first { $0.issuer == "Example" })
        #expect(bare.accountName == "alice@example.com" && bare.type == .totp && bare.digits == 6 && bare.period == 30)
        #expect(mechanisms.first { $0.type == .steam }?.accountName == "sophia_steam")
        #expect {
            try imported("bitwarden-password-protected.json")
        } throws: { error in
            (error as? LocalizedError)?.errorDescription?.contains("export the vault again as JSON (not encrypted)") == true
        }
    }

    @Test("1: Ente Auth plain export (codeDisplay, a quoted line, Algorithm.sha256, trash skipped); the encrypted one refused")
    func ente() throws {
        let (format, report, mechanisms) = try imported("ente.txt")
        #expect(format == .ente && report.imported.count == 3)
        #expect(report.notes == ["1 entry in Ente's trash skipped"])
        try checkTheThree(mechanisms)
        let encrypted = try fixture("ente-encrypted.txt")
        #expect(ImportFormat.detect(encrypted) == .ente)
        #expect {
            try ImportFormat.ente.read(encrypted) { "" }
        } throws: { error in
            (error as? LocalizedError)?.errorDescription?.contains("Argon2id") == true
        }
    }

    @Test("1: a list of URIs; an entry that is not valid is refused with why, the others imported; unknown files name the formats")
    func urisAndRefusals() throws {
        let text = """
            otpauth://totp/Deno:Mason?secret=4SJHB4GSD43FZBAI7C2HLRJGPQ&issuer=Deno
            # a comment
            otpauth://totp/Bad:secret?secret=NOT1BASE32&issuer=Bad
            otpauth://hotp/Issuu:James?secret=YOOMIXWS5GN6RTBPUFFWKTW5M4&issuer=Issuu&counter=1
            otpauth://yandex/Y:z?secret=JBSWY3DPEHPK3PXP
            """
        let data = Data(text.utf8)
        #expect(ImportFormat.detect(data) == .uris)
        let contents = try ImportFormat.uris.read(data) { "" }
        let client = AuthenticatorClient(storage: MemoryStorageClient())
        let report = try client.importEntries(contents.entries, overwrite: false)
        #expect(report.imported.count == 2)
        #expect(report.refused.count == 2)
        #expect(report.refused.contains { $0.hasPrefix("line 3: ") && $0.contains("'secret'") }, "\(report.refused)")
        #expect(!report.refused.joined().contains("NOT1BASE32"), "no secret in the report")
        try checkTheThree(client.accounts().flatMap(\.mechanisms), steam: false)
        #expect(throws: ImportError.self) { try ImportFormat.uris.read(Data("otpauth://totp/A:b?secret=JBSWY3DP\nhello\n".utf8)) { "" } }
        #expect(ImportFormat.detect(Data("{\"something\": 1}".utf8)) == nil)
        #expect(ImportFormat.detect(Data("hello world\n".utf8)) == nil)
    }
}
