import Foundation

/// Why an export file could not be read. When one is thrown, nothing was imported.
public enum ImportError: Error, Sendable, Equatable {
    /// The content matches none of the formats Coffer reads.
    case unknownFormat(String)
    /// The file looks like `format` but cannot be read as it: damaged, cut short, or another
    /// version. `reason` says where.
    case malformed(format: String, reason: String)
    /// The file is encrypted and needs a password.
    case passwordRequired(format: String)
    /// The password does not open the file (or the file was changed).
    case wrongPassword(format: String)
    /// The file is encrypted in a way Coffer cannot open; `reason` says what to do instead.
    case encryptionUnsupported(format: String, reason: String)
}

extension ImportError: LocalizedError {
    /// What is wrong with the file and what to do (which format, which password, which entry); it
    /// always ends by saying whether anything was imported, and never quotes a secret.
    public var errorDescription: String? {
        switch self {
        case .unknownFormat(let hint):
            return "The file is not an export Coffer can read (\(hint)). Supported: Aegis, Google Authenticator "
                + "(otpauth-migration), 2FAS, andOTP, FreeOTP+, Bitwarden, Ente Auth and lists of otpauth URIs; "
                + "give --format to say which it is. Nothing was imported."
        case let .malformed(format, reason):
            return "The \(format) file cannot be read: \(reason). Nothing was imported."
        case .passwordRequired(let format):
            return "The \(format) file is encrypted: give its password (prompt, --password-file or COFFER_PASSWORD)."
        case .wrongPassword(let format):
            return "The password does not open the \(format) file (or the file was changed). Nothing was imported."
        case let .encryptionUnsupported(format, reason):
            return "The \(format) file is encrypted in a way Coffer cannot open: \(reason). Nothing was imported."
        }
    }
}
