import Foundation

/// Ente Auth's exports. The plain one is a text file of `otpauth://` URIs, one per line (each
/// with a `codeDisplay` parameter of Ente's own; a line may be JSON-quoted, and old ones write
/// `algorithm=Algorithm.sha1`); entries Ente keeps in its trash are skipped. The encrypted one
/// (`kdfParams`, `encryptedData`) is sealed with Argon2id and XChaCha20-Poly1305 secretstream,
/// which swift-crypto does not have: it is recognised and refused with what to do.
public enum EnteAuthExport {
    static let format = "Ente Auth export"

    static func matchesEncrypted(_ json: [String: Any]) -> Bool {
        json["kdfParams"] is [String: Any] && json["encryptedData"] is String
    }

    /// Refuses an encrypted export, saying what to do.
    static func refuseEncrypted() -> ImportError {
        .encryptionUnsupported(format: format, reason: "it is sealed with Argon2id and XChaCha20-Poly1305, which Coffer cannot "
            + "open; export again from Ente Auth as plain text, import it, then delete it")
    }

    /// A plain export's line as a URI: unquoted, with Ente's old `Algorithm.` prefix dropped.
    static func normalize(_ line: String) -> String {
        var text = line
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2,
           let unquoted = try? JSONDecoder().decode(String.self, from: Data(text.utf8)) {
            text = unquoted
        }
        return text.replacingOccurrences(of: "algorithm=Algorithm.", with: "algorithm=", options: .caseInsensitive)
    }

    /// Whether Ente keeps the entry of `uri` in its trash.
    static func isTrashed(_ uri: String) -> Bool {
        guard let display = URLComponents(string: uri)?.queryItems?.first(where: { $0.name == "codeDisplay" })?.value,
              let json = try? JSONSerialization.jsonObject(with: Data(display.utf8)) as? [String: Any] else { return false }
        return json["trashed"] as? Bool == true
    }
}
