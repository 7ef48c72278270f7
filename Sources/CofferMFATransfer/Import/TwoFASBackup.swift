import Crypto
import CryptoExtras
import Foundation

/// 2FAS Authenticator's backup (`.2fas`, JSON, schema versions 1–4), plain or encrypted.
///
/// Each of `services` has a `name` (the issuer), a base32 `secret` and an `otp` object
/// (`account`, `issuer`, `digits`, `period`, `algorithm`, `counter`, `tokenType`
/// TOTP/HOTP/STEAM; schema 1 has only `label`, as `Issuer:Account`). Encrypted backups hold the
/// services in `servicesEncrypted` and a known text in `reference`, each
/// `base64(ciphertext‖tag):base64(salt):base64(iv)`: AES-256-GCM under a key derived with
/// PBKDF2-HMAC-SHA256, 10,000 rounds, from the password and the 256-byte salt.
public enum TwoFASBackup {
    static let format = "2FAS backup"

    /// Whether `json` is a 2FAS backup.
    static func matches(_ json: [String: Any]) -> Bool {
        json["schemaVersion"] is Int && (json["services"] is [Any] || json["servicesEncrypted"] is String)
    }

    /// The entries of a backup; `password` is asked for only when it is encrypted.
    public static func entries(from data: Data, password: () throws -> String) throws -> [ImportEntry] {
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any], matches(json) else {
            throw ImportError.malformed(format: format, reason: "it is not 2FAS backup JSON (no schemaVersion and services)")
        }
        guard let version = json["schemaVersion"] as? Int, (1...4).contains(version) else {
            throw ImportError.malformed(format: format, reason: "its schema version \(json["schemaVersion"] ?? "?") is not one Coffer knows (1 to 4)")
        }
        var services = json["services"] as? [[String: Any]] ?? []
        if let sealed = json["servicesEncrypted"] as? String, !sealed.isEmpty {
            let opened = try open(sealed, reference: json["reference"] as? String, password: try password())
            guard let decoded = try? JSONSerialization.jsonObject(with: opened) as? [[String: Any]] else {
                throw ImportError.malformed(format: format, reason: "its decrypted services are not a JSON list")
            }
            services = decoded
        }
        // Groups are a table of their own; a service names its group by id.
        let groups = Dictionary(((json["groups"] as? [[String: Any]]) ?? []).compactMap { group -> (String, String)? in
            guard let id = group["id"] as? String, let name = group["name"] as? String else { return nil }
            return (id, name)
        }, uniquingKeysWith: { first, _ in first })
        return services.enumerated().map { index, service in entry(service, number: index + 1, groups: groups) }
    }

    private static func entry(_ service: [String: Any], number: Int, groups: [String: String]) -> ImportEntry {
        let otp = service["otp"] as? [String: Any] ?? [:]
        let issuer = (service["name"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? otp["issuer"] as? String
        let names = ImportEntry.Fields.names(issuer: issuer, name: otp["account"] as? String ?? otp["label"] as? String ?? "")
        guard let secret = service["secret"] as? String else {
            return ImportEntry(title: "\(names.issuer): \(names.accountName)", content: .refused("it has no secret"))
        }
        let type = (otp["tokenType"] as? String ?? "TOTP").lowercased()
        return .account(ImportEntry.Fields(
            type: type, issuer: names.issuer, accountName: names.accountName, secret: secret,
            algorithm: otp["algorithm"] as? String, digits: otp["digits"] as? Int, period: otp["period"] as? Int,
            counter: (otp["counter"] as? Int).map { UInt64(max(0, $0)) },
            details: AccountDetails(groups: (service["groupId"] as? String).map { [groups[$0] ?? $0] } ?? [])))
    }

    /// Opens `sealed` (after checking the password on `reference`, when there is one).
    static func open(_ sealed: String, reference: String?, password: String) throws -> Data {
        let parts = try split(sealed)
        let key = try KDF.Insecure.PBKDF2.deriveKey(from: Data(password.utf8), salt: parts.salt, using: .sha256,
                                                    outputByteCount: 32, unsafeUncheckedRounds: 10_000)
        if let reference, !reference.isEmpty {
            let check = try split(reference)
            guard (try? openBox(check, key: key)) != nil else { throw ImportError.wrongPassword(format: format) }
        }
        do {
            return try openBox(parts, key: key)
        } catch {
            throw ImportError.wrongPassword(format: format)
        }
    }

    private static func split(_ text: String) throws -> (sealed: Data, salt: Data, iv: Data) {
        let pieces = text.split(separator: ":").map { Data(base64Encoded: String($0)) }
        guard pieces.count == 3, let sealed = pieces[0], let salt = pieces[1], let iv = pieces[2], sealed.count >= 16, iv.count == 12 else {
            throw ImportError.malformed(format: format, reason: "an encrypted field is not base64(ciphertext):base64(salt):base64(iv)")
        }
        return (sealed, salt, iv)
    }

    private static func openBox(_ parts: (sealed: Data, salt: Data, iv: Data), key: SymmetricKey) throws -> Data {
        let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: parts.iv), ciphertext: parts.sealed.dropLast(16), tag: parts.sealed.suffix(16))
        return try AES.GCM.open(box, using: key)
    }
}
