import Foundation

/// Bitwarden's unencrypted JSON export: `items` whose `login.totp` holds an `otpauth://` URI,
/// `steam://SECRET`, or a bare base32 secret (SHA1, 6 digits, 30 s). A bare secret takes the
/// item's `name` as issuer and `login.username` as account. Items without a TOTP are not
/// accounts and are left out. The item's notes, favourite mark and folder go with the account.
/// Encrypted exports (`"encrypted": true`) cannot be read.
public enum BitwardenExport {
    static let format = "Bitwarden export"

    static func matches(_ json: [String: Any]) -> Bool {
        json["encrypted"] is Bool && (json["items"] is [Any] || json["data"] is String)
    }

    /// The entries of an unencrypted Bitwarden export: one per item with a TOTP.
    ///
    /// - Throws: ``ImportError/encryptionUnsupported(format:reason:)`` for an encrypted export;
    ///   ``ImportError/malformed(format:reason:)`` when `data` is not a Bitwarden export.
    public static func entries(from data: Data) throws(ImportError) -> [ImportEntry] {
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any], matches(json) else {
            throw .malformed(format: format, reason: "it is not Bitwarden JSON (no encrypted flag and items)")
        }
        if json["encrypted"] as? Bool == true {
            throw .encryptionUnsupported(format: format, reason: json["passwordProtected"] as? Bool == true
                ? "it is password-protected; export the vault again as JSON (not encrypted), import it, then delete it"
                : "it is encrypted with your Bitwarden account's key; export the vault again as JSON (not encrypted)")
        }
        let items = json["items"] as? [[String: Any]] ?? []
        let folders = Dictionary(((json["folders"] as? [[String: Any]]) ?? []).compactMap { folder -> (String, String)? in
            guard let id = folder["id"] as? String, let name = folder["name"] as? String else { return nil }
            return (id, name)
        }, uniquingKeysWith: { first, _ in first })
        return items.compactMap { item -> ImportEntry? in
            guard let login = item["login"] as? [String: Any], let totp = (login["totp"] as? String)?.trimmingCharacters(in: .whitespaces),
                  !totp.isEmpty else { return nil }
            let name = item["name"] as? String ?? "", username = login["username"] as? String ?? ""
            let details = AccountDetails(note: item["notes"] as? String, groups: (item["folderId"] as? String).map { [folders[$0] ?? $0] } ?? [],
                                         isFavorite: item["favorite"] as? Bool ?? false)
            if URIListExport.isURI(totp) {
                return ImportEntry(title: "\(name): \(username)", content: .uri(totp), details: details)
            }
            let steam = totp.lowercased().hasPrefix("steam://")
            return .account(ImportEntry.Fields(
                type: steam ? "steam" : "totp", issuer: name, accountName: username.isEmpty ? name : username,
                secret: steam ? String(totp.dropFirst("steam://".count)) : totp, details: details))
        }
    }
}
