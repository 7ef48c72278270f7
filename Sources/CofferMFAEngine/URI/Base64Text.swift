import Foundation

/// Lenient base64, as enrolment URIs carry it: the standard or the URL-safe alphabet, with or
/// without `=` padding.
package enum Base64Text {
    /// The bytes, or `nil` when `text` is not base64 in either alphabet.
    package static func decode(_ text: String) -> Data? {
        var normalized = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            .replacingOccurrences(of: " ", with: "+")
        normalized += String(repeating: "=", count: (4 - normalized.count % 4) % 4)
        return Data(base64Encoded: normalized)
    }

    /// Decodes base64 that holds UTF-8 text without control characters, or returns `nil`.
    package static func decodeText(_ text: String) -> String? {
        guard let data = decode(text), let string = String(data: data, encoding: .utf8),
              !string.unicodeScalars.contains(where: AuthenticatorURI.isControl) else { return nil }
        return string
    }

    /// `text`'s bytes in the standard alphabet with padding (the form the ForgeRock server
    /// signs over), or `nil` when it is not base64.
    package static func normalize(_ text: String) -> String? {
        decode(text).map { $0.base64EncodedString() }
    }

    /// `text` as URL-safe base64 without padding (how ForgeRock servers send identifiers).
    package static func encodeURLSafe(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
