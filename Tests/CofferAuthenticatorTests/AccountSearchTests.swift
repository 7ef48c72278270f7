import CofferAuthenticator
import Foundation
import Testing

/// Issue 31, point 1: finding accounts by what a person types is library API.
@Suite("AccountSearch and AuthenticatorClient.entries(matching:)")
struct AccountSearchTests {
    static func client() throws -> AuthenticatorClient {
        let client = AuthenticatorClient(storage: MemoryStorageClient(), ledger: nil)
        for uri in ["otpauth://totp/GitHub:alice?secret=JBSWY3DPEHPK3PXP&issuer=GitHub",
                    "otpauth://totp/GitHub:bob?secret=KRSXG5CTMVRXEZLU&issuer=GitHub",
                    "otpauth://totp/J%C3%BCrgen%20Bank:j%C3%BCrgen?secret=GEZDGNBVGY3TQOJQ&issuer=J%C3%BCrgen%20Bank",
                    "otpauth://totp/a%3Ab:c?secret=MFRGGZDFMZTWQ2LK&issuer=a%3Ab"] {
            _ = try client.addAccount(uri: uri)
        }
        return client
    }

    @Test("a part of either name matches; case, accents and width do not matter")
    func parts() throws {
        let client = try Self.client()
        #expect(client.entries(matching: "github").count == 2)
        #expect(client.entries(matching: "jurgen").map(\.account.accountName) == ["jürgen"])
        #expect(client.entries(matching: nil).count == 4)
        #expect(client.entries(matching: "nothing like it").isEmpty)
    }

    @Test("'Issuer: account' as printed, or 'Issuer:account', names one account exactly")
    func exact() throws {
        let client = try Self.client()
        #expect(client.entries(matching: "GitHub: alice").map(\.account.accountName) == ["alice"])
        #expect(client.entries(matching: "github:BOB").map(\.account.accountName) == ["bob"])
        #expect(client.entries(matching: "a:b: c").map(\.account.issuer) == ["a:b"], "an issuer holding ':' is named exactly")
    }

    @Test("a renamed account is found by its shown names and by the issuer's")
    func renamed() throws {
        let client = try Self.client()
        let alice = try #require(client.entries(matching: "GitHub: alice").first)
        _ = try client.rename(alice.account, issuer: "Work code", accountName: nil)
        #expect(client.entries(matching: "Work code: alice").count == 1)
        #expect(client.entries(matching: "GitHub: alice").count == 1)
        #expect(AccountSearch.sorted(client.entries(matching: nil)).map(\.account.shownIssuer).first == "a:b")
    }

    @Test("matching names alone gives what matching whole accounts gives, query by query")
    func namesAlone() throws {
        let client = try Self.client()
        let alice = try #require(client.entries(matching: "GitHub: alice").first)
        _ = try client.rename(alice.account, issuer: "Work  Code", accountName: "ÄLICE ")
        let accounts = client.entries(matching: nil).map(\.account)
        let names = accounts.map(AccountNames.init)
        for query in ["github", "GITHUB: BOB", "github:bob", "jurgen", "Jürgen Bank: jürgen", "a:b: c", "a:b:c", "work  code: älice",
                      "alice", "  bob  ", "ｇｉｔｈｕｂ", "Code", "nothing", "", ":", ": ", "a"] {
            let fromAccounts = AccountSearch.matches(query, in: accounts).map(\.identifier)
            let fromNames = AccountSearch.matches(query, in: names).map(\.identifier)
            #expect(fromNames == fromAccounts, "query \(query)")
            #expect(client.entries(matching: query).map(\.account.identifier) == fromAccounts, "query \(query)")
        }
        #expect(AccountSearch.matches("work  code: alice", in: names).count == 1, "renamed names fold as typed")
        #expect(AccountSearch.matches("  GITHUB  ", in: names).count == 2, "the issuer's names count beside the shown ones")
    }
}
