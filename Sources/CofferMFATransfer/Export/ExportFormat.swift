/// The formats accounts are exported in, beside ``ImportFormat``: what ``AccountExport`` writes.
public enum ExportFormat: String, CaseIterable, Sendable {
    /// An Aegis vault (JSON), optionally encrypted with a password: a backup, or a move to Aegis.
    case aegis
    /// One `otpauth://` URI per line: pass-otp, 2fa, cotp and most tools read them.
    case uris
    /// One PNG QR code per account: for any phone app.
    case qr
    /// Google Authenticator's transfer QR codes (`otpauth-migration://`), ten accounts each.
    case google

    /// What the format is called in reports.
    public var name: String {
        switch self {
        case .aegis: "Aegis vault"
        case .uris: "otpauth:// URIs"
        case .qr: "QR codes"
        case .google: "Google Authenticator transfer codes"
        }
    }

    /// Whether the format can be sealed with a password. The others hold the secrets in the
    /// clear: whoever sees them can make the codes.
    public var canBeEncrypted: Bool { self == .aegis }
}
