import CofferMFAEngine
import Foundation

/// Ping's base64 helpers, over Coffer's one lenient base64 reader (either alphabet, padding
/// optional).
public final class Base64: Sendable {
    private init() {}

    /// Whether `value` is base64 in either alphabet, padding optional. As in Ping, the decoded
    /// bytes need not be text, so many plain words (`demo`) "are base64".
    public static func isBase64Encoded(_ value: String) -> Bool {
        Base64Text.decode(value) != nil
    }

    /// The UTF-8 text `value` (base64, either alphabet) encodes.
    public static func decodeBase64(_ value: String) throws -> String {
        try text(Base64Text.decode(value), value)
    }

    /// The UTF-8 text `value` (base64url) encodes.
    public static func decodeBase64Url(_ value: String) throws -> String {
        try text(Base64Text.decode(value), value)
    }

    /// The bytes `base64URLString` encodes, or `nil`.
    public static func decodeBase64UrlToData(_ base64URLString: String) -> Data? {
        Base64Text.decode(base64URLString)
    }

    /// `value`'s UTF-8 bytes as base64url without padding (Ping's choice, despite the name).
    public static func encodeBase64(_ value: String) -> String {
        Base64Text.encodeURLSafe(value)
    }

    /// base64url without padding, rewritten in the standard alphabet with padding.
    public static func recodeBase64NoWrapUrlSafeValueToNoWrap(_ value: String) throws -> String {
        guard let standard = Base64Text.normalize(value) else { throw Base64Error.invalidBase64(Base64Error.described(value)) }
        return standard
    }

    /// Standard base64, rewritten as base64url without padding.
    public static func recodeBase64NoWrapValueToUrlSafeNoWrap(_ value: String) throws -> String {
        guard let bytes = Base64Text.decode(value) else { throw Base64Error.invalidBase64(Base64Error.described(value)) }
        return bytes.base64URLEncodedString()
    }

    private static func text(_ bytes: Data?, _ value: String) throws -> String {
        guard let bytes else { throw Base64Error.invalidBase64(Base64Error.described(value)) }
        guard let text = String(data: bytes, encoding: .utf8) else { throw Base64Error.invalidBase64String(Base64Error.described(value)) }
        return text
    }
}

/// Why a value is not base64 of text. The payload describes the value (its length); it never
/// repeats it, since values decoded this way can be secrets.
public enum Base64Error: Error, LocalizedError, Sendable {
    /// The value is not base64.
    case invalidBase64(String)
    /// The value is base64, but what it decodes to is not UTF-8 text.
    case invalidBase64String(String)

    /// What is wrong.
    public var errorDescription: String? {
        switch self {
        case .invalidBase64(let value): "The value is not valid base64 (\(value))"
        case .invalidBase64String(let value): "The value's base64 does not decode to UTF-8 text (\(value))"
        }
    }

    static func described(_ value: String) -> String { "\(value.count) characters" }
}
