import CofferMFAEngine
import Foundation

/// FreeOTP+'s JSON export: `tokens`, each with `issuerExt` (else `issuerInt`), `label`, `type`
/// (TOTP/HOTP), `algo`, `digits`, `period`, `counter` and `secret` as a list of signed bytes;
/// `tokenOrder` lists them. A TOTP token whose issuer is `Steam` is a Steam Guard token, as
/// FreeOTP treats it. FreeOTP keeps a HOTP counter one below the next one to use (its own URI
/// export adds one), so one is added here too.
public enum FreeOTPPlusExport {
    static let format = "FreeOTP+ export"

    static func matches(_ json: [String: Any]) -> Bool {
        json["tokens"] is [Any] && json["tokenOrder"] is [Any]
    }

    /// The entries of a FreeOTP+ export, one per token; a token whose secret is not a list of bytes
    /// is returned as refused.
    ///
    /// - Throws: ``ImportError/malformed(format:reason:)`` when `data` is not a FreeOTP+ export.
    public static func entries(from data: Data) throws(ImportError) -> [ImportEntry] {
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any], matches(json),
              let tokens = json["tokens"] as? [[String: Any]] else {
            throw .malformed(format: format, reason: "it is not FreeOTP+ JSON (no tokens and tokenOrder)")
        }
        return tokens.map { token in
            let issuer = (token["issuerExt"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? token["issuerInt"] as? String ?? ""
            let label = token["label"] as? String ?? ""
            let title = "\(issuer): \(label)"
            guard let values = token["secret"] as? [Int], !values.isEmpty, values.allSatisfy({ (-128...255).contains($0) }) else {
                return ImportEntry(title: title, content: .refused("its secret is not a list of bytes"))
            }
            let secret = Data(values.map { UInt8(truncatingIfNeeded: $0) })
            var type = (token["type"] as? String ?? "TOTP").lowercased()
            if type == "totp", issuer == "Steam" { type = "steam" }
            return .account(ImportEntry.Fields(
                type: type, issuer: issuer, accountName: label, secret: Base32Codec.encode(secret), algorithm: token["algo"] as? String,
                digits: token["digits"] as? Int, period: token["period"] as? Int,
                counter: type == "hotp" ? (token["counter"] as? Int).map { UInt64(max(0, $0)) + 1 } ?? 0 : nil))
        }
    }
}
