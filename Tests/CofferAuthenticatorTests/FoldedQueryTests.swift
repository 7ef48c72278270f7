@testable import CofferAuthenticator
import Foundation
import Testing

/// Matching compares a folded query with folded names without building them (a seventh of a
/// `coffer code` went to building them): every answer must be the one building them gives.
@Suite("AccountSearch.FoldedQuery")
struct FoldedQueryTests {
    /// Pieces that meet every branch: blanks to trim at either end and inside, case, the
    /// separators, text outside ASCII (which folds through Foundation), and the Kelvin sign,
    /// which Swift's `==` takes for `K`.
    static let pieces = ["", " ", "\t", "a", "A", "Ab", "b ", " a", ":", ": ", "é", "É", "\u{212A}", "k", "git Hub"]

    @Test("equalsFolded answers as fold(first + middle + last) == query does, for every combination of pieces")
    func agreesWithBuiltStrings() {
        let queries = Set(Self.pieces.flatMap { first in Self.pieces.map { AccountSearch.fold(first + ": " + $0) } } + Self.pieces.map(AccountSearch.fold))
        var compared = 0
        for text in queries {
            let query = AccountSearch.FoldedQuery(text)
            for first in Self.pieces {
                for middle in ["", ":", ": "] {
                    for last in Self.pieces {
                        let built = text == AccountSearch.fold(first + middle + last)
                        #expect(query.equalsFolded(first, middle, last) == built, "\(text.debugDescription) vs \((first + middle + last).debugDescription)")
                        compared += 1
                    }
                }
            }
        }
        #expect(compared > 10_000)
    }

    @Test("a printed name with blanks around its parts and another case matches exactly")
    func printedForms() {
        let names = [AccountNames(Account(issuer: "GitHub", accountName: "alice")), AccountNames(Account(issuer: "GitHub", accountName: "bob"))]
        #expect(AccountSearch.matches("  github: ALICE\t", in: names).map(\.accountName) == ["alice"])
        #expect(AccountSearch.matches("GitHub:bob", in: names).map(\.accountName) == ["bob"])
        #expect(AccountSearch.matches("github:  bob", in: names).isEmpty, "blanks inside a name are not folded away")
    }
}
