/// Names of enrolment URI parameters, and the two label helpers Ping's parsers share. The
/// parsing itself is Coffer's one URI reader, which CofferOath and CofferPush use.
public final class UriParser: Sendable {
    /// `mfauth`.
    public static let mfauthScheme = "mfauth"
    /// The issuer parameter.
    public static let issuerParam = "issuer"
    /// The push user id parameter.
    public static let userIdParam = "d"
    /// The OATH user id parameter.
    public static let userIdParamOath = "uid"
    /// The image URL parameter.
    public static let imageUrlParam = "image"
    /// The background colour parameter.
    public static let backgroundColorParam = "b"
    /// The policies parameter.
    public static let policiesParam = "policies"

    /// The helpers.
    public init() {}

    /// Splits a decoded label into issuer and account name, as Ping does:
    /// - `issuer:account` (exactly one `:`): the account name is the second part; the issuer is
    ///   the first, or `issuerParam ?? ""` when the first is empty. When both the label and
    ///   `issuerParam` name an issuer they must match without case, else
    ///   ``UriParseError/issuerMismatch(parameterIssuer:labelIssuer:)``.
    /// - `account` (no `:`): `(issuerParam ?? "", label)`.
    /// - anything else (an empty label, two or more `:`): `(issuerParam ?? "", "")`.
    public func parseLabelComponents(_ label: String, issuerParam: String?) throws -> (issuer: String, accountName: String) {
        let parts = label.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 2:
            let labelIssuer = parts[0]
            if !labelIssuer.isEmpty, let issuerParam, labelIssuer.lowercased() != issuerParam.lowercased() {
                throw UriParseError.issuerMismatch(parameterIssuer: issuerParam, labelIssuer: labelIssuer)
            }
            return (labelIssuer.isEmpty ? issuerParam ?? "" : labelIssuer, parts[1])
        case 1 where !label.isEmpty:
            return (issuerParam ?? "", label)
        default:
            return (issuerParam ?? "", "")
        }
    }

    /// `backgroundColor` without one leading `#`.
    public func formatBackgroundColor(_ backgroundColor: String?) -> String? {
        guard let backgroundColor else { return nil }
        return backgroundColor.hasPrefix("#") ? String(backgroundColor.dropFirst()) : backgroundColor
    }
}
