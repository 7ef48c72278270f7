import CofferMFAEngine
import Foundation

/// Ping's base64 helpers on text.
extension String {
    /// The UTF-8 bytes as standard base64 with padding.
    public func base64Encoded() -> String { Data(utf8).base64EncodedString() }

    /// The UTF-8 bytes as base64url without padding.
    public func base64URLEncodedString() -> String { Data(utf8).base64URLEncodedString() }

    /// The text this base64 (either alphabet) encodes, or `nil`.
    public func base64Decoded() -> String? { decodeBase64().flatMap { String(data: $0, encoding: .utf8) } }

    /// Whether this is base64 in either alphabet, padding optional.
    public func isBase64Encoded() -> Bool { Base64.isBase64Encoded(self) }

    /// The bytes this base64url encodes, or `nil`.
    public func decodeURL() -> Data? { Base64Text.decode(self) }

    /// This, padded with `=` to a multiple of 4.
    public func base64Pad() -> String { self + String(repeating: "=", count: (4 - count % 4) % 4) }

    /// The bytes this base64 (either alphabet, padding optional) encodes, or `nil`.
    public func decodeBase64() -> Data? { Base64Text.decode(self) }

    /// base64url rewritten in the standard alphabet (`-` → `+`, `_` → `/`), padding unchanged.
    public func urlSafeDecoding() -> String {
        replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    }

    /// Standard base64 rewritten as base64url without padding.
    public func urlSafeEncoding() -> String {
        replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
