import CofferMFAEngine
import Foundation
import Testing

@Suite("RowBinding: identities byte for byte as sealed since 0.2.0")
struct RowBindingTests {
    @Test("the fast writing of a [String], and of an identity, is JSONEncoder's, for every kind of character, empty values included")
    func sameAsJSONEncoder() throws {
        let pieces = ["", "a", "Bank", "alice@example.com", "ü", "日本", "🔐", "\u{7f}", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{2028}",
                      "https://am.example.com/push", "x y", "=", "-", "é\u{301}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let values = (0..<Int.random(in: 0...5, using: &generator)).map { _ in
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            }
            let expected = String(decoding: try JSONEncoder().encode(values), as: UTF8.self)
            #expect(RowBinding.jsonArray(values) == expected, "\(values)")
            #expect(RowBinding.identity("oath/é-\(values.count)/secret", columns: values) == "oath/é-\(values.count)/secret#v2" + expected,
                    "\(values)")
        }
    }
}
