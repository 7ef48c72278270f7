import Foundation

/// andOTP's plain JSON backup: a list of entries with `secret` (base32, padded), `issuer`,
/// `label` (the account; in backups without `issuer`, `Issuer - Account`), `type`
/// (TOTP/HOTP/STEAM), `algorithm`, `digits`, `period` (TOTP only) and `counter` (HOTP only);
/// `tags` become the account's groups and `thumbnail` its icon's name.
/// Encrypted andOTP backups (`.json.aes`) are not read: export a plain one.
public enum AndOTPBackup {
    static let format = "andOTP backup"

    static func matches(_ json: Any) -> Bool {
        guard let list = json as? [[String: Any]], let first = list.first else { return false }
        return first["secret"] is String && first["type"] is String && first["label"] != nil
    }

    /// The entries of a plain andOTP backup, one per item; an item without a secret is returned as
    /// refused, with the reason.
    ///
    /// - Throws: ``ImportError/encryptionUnsupported(format:reason:)`` when `data` is not JSON (an
    ///   encrypted `.json.aes` backup); ``ImportError/malformed(format:reason:)`` when it is JSON
    ///   but not a list of andOTP entries.
    public static func entries(from data: Data) throws(ImportError) -> [ImportEntry] {
        guard let json = try? JSONSerialization.jsonObject(with: data) else {
            throw .encryptionUnsupported(format: format, reason: "it is not JSON, so it is probably an encrypted (.json.aes) backup; "
                + "export a plain JSON backup from andOTP instead, and delete it once imported")
        }
        guard let list = json as? [[String: Any]], list.isEmpty || matches(list) else {
            throw .malformed(format: format, reason: "it is not a list of andOTP entries")
        }
        return list.map { item in
            var issuer = item["issuer"] as? String ?? ""
            var label = item["label"] as? String ?? ""
            if issuer.isEmpty, let range = label.range(of: " - ") {
                issuer = String(label[..<range.lowerBound])
                label = String(label[range.upperBound...])
            }
            guard let secret = item["secret"] as? String else {
                return ImportEntry(title: "\(issuer): \(label)", content: .refused("it has no secret"))
            }
            let type = (item["type"] as? String ?? "TOTP").lowercased()
            return .account(ImportEntry.Fields(
                type: type, issuer: issuer, accountName: label, secret: secret, algorithm: item["algorithm"] as? String,
                digits: item["digits"] as? Int, period: item["period"] as? Int,
                counter: (item["counter"] as? Int).map { UInt64(max(0, $0)) },
                details: AccountDetails(groups: item["tags"] as? [String] ?? [], icon: item["thumbnail"] as? String)))
        }
    }
}
