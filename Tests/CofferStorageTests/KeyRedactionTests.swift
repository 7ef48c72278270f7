import CofferStorage
import Crypto
import Foundation
import Testing

/// A key printed, logged, debug-printed or dumped never shows its material.
@Suite("Keys never show their material")
struct KeyRedactionTests {
    /// The forms key bytes would take in text: hex, base64 and the decimal list `dump` prints.
    static func forms(of key: SymmetricKey) -> [String] {
        let bytes = key.withUnsafeBytes { Array($0) }
        return [bytes.map { String(format: "%02x", $0) }.joined(), Data(bytes).base64EncodedString(),
                bytes.prefix(4).map { "- \($0)" }.joined(separator: "\n")]
    }

    static func renderings(of value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return ["\(value)", String(reflecting: value), dumped]
    }

    @Test("VersionedKey and KeyRing show ids, never key material")
    func keys() {
        var ring = KeyRing.fresh()
        _ = ring.rotate()
        for (value, key) in [(ring.primary as Any, ring.primary.key), (ring as Any, ring.key(id: 1)!.key)] {
            for text in Self.renderings(of: value) {
                for form in Self.forms(of: key) { #expect(!text.contains(form), "\(text)") }
                #expect(!text.contains("bytes"), "\(text)")
            }
        }
    }
}
