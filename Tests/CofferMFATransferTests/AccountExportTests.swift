import CofferMFATransfer
import Foundation
import TestSupport
import Testing

/// The exporters: each format read back by the importers gives the same accounts; what a
/// format cannot hold is named, never changed to fit.
@Suite("Transfer: exports in every format")
struct AccountExportTests {
    static let accounts = [
        TransferAccount(type: "totp", issuer: "Deno", accountName: "Mason", secret: "4SJHB4GSD43FZBAI7C2HLRJGPQ",
                        algorithm: "SHA1", digits: 6, period: 30, uuid: "0B4A5A4E-9D3C-4C43-8E0B-0D6E2C1B7A11"),
        TransferAccount(type: "hotp", issuer: "Issuu", accountName: "James", secret: "YOOMIXWS5GN6RTBPUFFWKTW5M4",
                        algorithm: "SHA256", digits: 8, counter: 7),
    ]

    /// What matters of an account for its codes, whichever way it travelled.
    func essence(_ account: TransferAccount) -> String {
        "\(account.type)|\(account.issuer)|\(account.accountName)|\(account.secret)|\((account.algorithm ?? "SHA1").uppercased())|"
            + "\(account.digits ?? 6)|\(account.type == "totp" ? account.period ?? 30 : 0)|\(account.counter ?? 0)"
    }

    /// The accounts of `entries`, each parsed back from its URI where it came as one.
    func accounts(in entries: [ImportEntry]) throws -> [TransferAccount] {
        try entries.map { entry in
            switch entry.content {
            case .fields(let fields): return fields
            case .uri(let uri):
                let components = try #require(URLComponents(string: uri))
                let items = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
                let label = (components.path.removingPercentEncoding ?? "").dropFirst().split(separator: ":").map(String.init)
                return TransferAccount(type: components.host ?? "", issuer: items["issuer"] ?? label[0], accountName: label.last ?? "",
                                       secret: items["secret"] ?? "", algorithm: items["algorithm"], digits: items["digits"].flatMap { Int($0) },
                                       period: items["period"].flatMap { Int($0) }, counter: items["counter"].flatMap { UInt64($0) })
            case .refused(let why):
                Issue.record("refused: \(why)")
                return TransferAccount(type: "", issuer: "", accountName: "", secret: "")
            }
        }
    }

    @Test("an Aegis vault, plain and sealed with a password, and a URI list read back as the same accounts", arguments: [
        (ExportFormat.aegis, nil), (.aegis, "correct horse"), (.uris, nil),
    ] as [(ExportFormat, String?)])
    func roundTrip(format: ExportFormat, password: String?) throws {
        let written = try AccountExport.write(Self.accounts, as: format, password: password)
        #expect(written.files.count == 1 && written.notExported.isEmpty && written.exportedCount == 2)
        let data = written.files[0].data
        let detected = try #require(ImportFormat.detect(data))
        #expect(detected == (format == .aegis ? .aegis : .uris))
        let entries = try detected.read(data) { try #require(password) }.entries
        #expect(try accounts(in: entries).map(essence) == Self.accounts.map(essence))
        if password != nil {
            #expect(!String(decoding: data, as: UTF8.self).contains("4SJHB4GSD43FZBAI7C2HLRJGPQ"), "the secret is sealed")
            #expect(throws: AegisVault.VaultError.wrongPassword) { try ImportFormat.aegis.read(data) { "wrong" } }
        }
    }

    @Test("Google transfer codes read back; a 60 s period, Steam and 7 digits are named, not changed")
    func google() throws {
        let odd = [
            TransferAccount(type: "totp", issuer: "Slow", accountName: "a", secret: "JBSWY3DPEHPK3PXP", period: 60),
            TransferAccount(type: "steam", issuer: "Steam", accountName: "b", secret: "JBSWY3DPEHPK3PXP"),
            TransferAccount(type: "totp", issuer: "Seven", accountName: "c", secret: "JBSWY3DPEHPK3PXP", digits: 7),
        ]
        let written = try AccountExport.write(Self.accounts + odd, as: .google)
        #expect(written.exportedCount == 2 && written.transferURIs.count == 1 && written.files.count == 1)
        #expect(written.notExported.count == 3)
        #expect(written.notExported.contains { $0.hasPrefix("Slow: a (totp): its period is 60 s") })
        let lines = Data(written.transferURIs.joined(separator: "\n").utf8)
        let entries = try ImportFormat.google.read(lines) { "" }.entries
        #expect(try accounts(in: entries).map(essence) == Self.accounts.map(essence))
    }

    @Test("Google transfer codes hold ten accounts each, numbered in their file names")
    func googleBatches() throws {
        let many = (0..<23).map { TransferAccount(type: "totp", issuer: "I\($0)", accountName: "a", secret: "JBSWY3DPEHPK3PXP") }
        let written = try AccountExport.write(many, as: .google)
        #expect(written.transferURIs.count == 3)
        #expect(written.files.map(\.name) == ["google-1-of-3.png", "google-2-of-3.png", "google-3-of-3.png"])
        let entries = try ImportFormat.google.read(Data(written.transferURIs.joined(separator: "\n").utf8)) { "" }
        #expect(entries.entries.count == 23 && entries.notes.isEmpty)
    }

    @Test("QR images scan back to each account's URI; a crafted name cannot leave the folder or hide the file")
    func qrImages() throws {
        let crafted = TransferAccount(type: "totp", issuer: "../../etc", accountName: ".hidden/\u{1B}[2J", secret: "JBSWY3DPEHPK3PXP")
        let written = try AccountExport.write(Self.accounts + [crafted], as: .qr)
        #expect(written.files.map(\.name).first == "001-Deno-Mason.png")
        for (index, file) in written.files.enumerated() {
            #expect(!file.name.contains("/") && !file.name.hasPrefix("."))
            #expect(try QRCodeImage.texts(in: file.data) == [(Self.accounts + [crafted])[index].otpauthURI])
        }
        #expect(AccountExport.fileName(".x/../y") == "_x_.._y")
    }

    @Test("a type Coffer writes no URI for is named, not written; uid and oid travel; printed transfer codes need no images")
    func attacked() throws {
        let motp = TransferAccount(type: "motp", issuer: "M", accountName: "m", secret: "JBSWY3DPEHPK3PXP")
        let uris = try AccountExport.write(Self.accounts + [motp], as: .uris)
        #expect(uris.exportedCount == 2 && uris.notExported == ["M: m (motp): Coffer writes no otpauth:// URI for this type"])
        #expect(!String(decoding: uris.files[0].data, as: UTF8.self).contains("motp"))

        let server = TransferAccount(type: "totp", issuer: "I", accountName: "a", secret: "JBSWY3DPEHPK3PXP", userId: "user", resourceId: "oid")
        #expect(server.otpauthURI.contains("uid=dXNlcg") && server.otpauthURI.contains("oid=b2lk"))

        let printed = try AccountExport.write(Self.accounts, as: .google, drawingImages: false)
        #expect(printed.files.isEmpty && printed.transferURIs.count == 1)
        let crafted = TransferAccount(type: "totp", issuer: "E\u{1B}[2J", accountName: "x", secret: "JBSWY3DPEHPK3PXP", period: 60)
        #expect(try AccountExport.write([crafted], as: .google).notExported.allSatisfy { !$0.contains("\u{1B}") })
    }

    @Test("a URI list line whose label is a pasted secret is titled by its number")
    func pastedSecretTitle() throws {
        let entries = try ImportFormat.uris.read(Data("otpauth://totp/JBSWY3DPEHPK3PXPJBSWY3DP\n".utf8)) { "" }.entries
        #expect(entries.map(\.title) == ["line 1"])
    }

    @Test("only an Aegis vault can be sealed: a password with another format is refused, nothing written")
    func passwordOnlyForAegis() {
        for format in ExportFormat.allCases where format != .aegis {
            #expect(throws: ExportError.cannotEncrypt(format)) { try AccountExport.write(Self.accounts, as: format, password: "pw") }
        }
    }
}
