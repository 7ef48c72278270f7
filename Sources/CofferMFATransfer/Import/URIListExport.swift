import CofferMFAEngine
import Foundation

/// A plain list of enrolment URIs, one per line (`otpauth://`, `pushauth://`, `mfauth://`):
/// what Ente Auth's plain-text export, `pass-otp` and many scripts write. Blank lines and lines
/// starting with `#` are skipped; any other line must be such a URI.
public enum URIListExport {
    /// The schemes a line may start with.
    static let schemes = ["otpauth://", "pushauth://", "mfauth://"]

    /// Whether `line` is an enrolment URI.
    static func isURI(_ line: String) -> Bool {
        schemes.contains { line.lowercased().hasPrefix($0) }
    }

    /// The entries of `lines` (already without blank lines).
    public static func entries(fromLines lines: [String]) throws(ImportError) -> [ImportEntry] {
        var entries: [ImportEntry] = []
        for (number, line) in lines.enumerated() where !line.hasPrefix("#") {
            guard isURI(line) else {
                throw .malformed(format: "list of URIs", reason: "line \(number + 1) is not an otpauth://, pushauth:// or mfauth:// URI")
            }
            entries.append(ImportEntry(title: title(of: line, number: number + 1), content: .uri(line)))
        }
        return entries
    }

    /// `Issuer: account (type)` when the line is a whole enrolment URI (a known type, and a
    /// secret that is base32, or a push registration's endpoint), else `line N`: a label that
    /// is in fact a secret pasted in the wrong place is never repeated. Only a title: the
    /// generation importing the entry checks the URI itself.
    private static func title(of line: String, number: Int) -> String {
        guard let uri = try? AuthenticatorURI(line) else { return "line \(number)" }
        let oathTypes = TransferAccount.otpauthTypes
        let whole = switch uri.scheme {
        case "otpauth": oathTypes.contains(uri.type) && (try? uri.base32Secret()) != nil
        case "mfauth": oathTypes.contains(uri.type) && (try? uri.base32Secret()) != nil && uri.parameters["r"] != nil
        case "pushauth": uri.type == "push" && uri.parameters["r"] != nil
        default: false
        }
        guard whole else { return "line \(number)" }
        // pushauth and mfauth carry the issuer parameter base64-encoded.
        let parameter = uri.parameters["issuer"].map { uri.scheme == "otpauth" ? $0 : Base64Text.decodeText($0) ?? $0 }
        let type = uri.scheme == "mfauth" ? "push+\(uri.type)" : uri.type
        return "\(uri.label.issuer ?? parameter ?? ""): \(uri.label.accountName ?? "") (\(type))"
    }
}
