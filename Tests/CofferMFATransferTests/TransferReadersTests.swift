import CofferMFATransfer
import Foundation
import TestSupport
import Testing

/// The readers alone, without either generation: every fixture is recognised by its content and
/// read into the same neutral entries (Deno / Mason TOTP, Issuu / James HOTP, Boeing / Sophia
/// Steam where the format has Steam), secrets and all.
@Suite("Transfer: the format readers, generation-neutral")
struct TransferReadersTests {
    static let deno = "4SJHB4GSD43FZBAI7C2HLRJGPQ"
    static let issuu = "YOOMIXWS5GN6RTBPUFFWKTW5M4"

    /// The secret an entry carries, from its fields or its URI, without padding (andOTP pads).
    func secret(of entry: ImportEntry) -> String? {
        let secret: String? = switch entry.content {
        case .fields(let fields): fields.secret
        case .uri(let uri): URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value
        case .refused: nil
        }
        return secret?.filter { $0 != "=" }
    }

    @Test("each plain fixture: its format by content; Deno (TOTP) and Issuu (HOTP) with their secrets", arguments: [
        ("andotp.json", ImportFormat.andOTP), ("2fas-plain.2fas", .twoFAS), ("freeotp-plus.json", .freeOTPPlus),
        ("bitwarden.json", .bitwarden), ("ente.txt", .ente), ("google.txt", .google),
    ])
    func readsEveryFixture(name: String, format: ImportFormat) throws {
        let data = try ImportFixtures.data(name)
        #expect(ImportFormat.detect(data) == format)
        let entries = try format.read(data) { Issue.record("a plain export asked for a password"); return "" }.entries
        let deno = try #require(entries.first { $0.title.hasPrefix("Deno: Mason") }, "\(entries.map(\.title))")
        #expect(secret(of: deno) == Self.deno)
        let issuu = try #require(entries.first { $0.title.hasPrefix("Issuu: James") })
        #expect(secret(of: issuu) == Self.issuu)
        if case .fields(let fields) = issuu.content { #expect(fields.type.lowercased() == "hotp" && issuu.title.hasSuffix("(hotp)")) }
    }

    @Test("a URI line's title is read without the secret, and a line that is no URI is titled by its number")
    func uriListTitles() throws {
        let text = "otpauth://totp/Deno:Mason?secret=\(Self.deno)&issuer=Deno\notpauth://%zz\n"
        let entries = try ImportFormat.uris.read(Data(text.utf8)) { "" }.entries
        #expect(entries.map(\.title) == ["Deno: Mason (totp)", "line 2"])
        #expect(!entries.contains { $0.title.contains(Self.deno) })
    }

    @Test("a title carrying terminal escapes is shown escaped")
    func escapedTitle() {
        let entry = ImportEntry.account(TransferAccount(type: "totp", issuer: "Evil\u{1B}[2J", accountName: "x", secret: Self.deno))
        #expect(!entry.title.contains("\u{1B}") && entry.title.lowercased().contains("\\u{1b}"), "\(entry.title)")
    }
}
