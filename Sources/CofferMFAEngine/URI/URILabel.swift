import Foundation

extension AuthenticatorURI {
    /// The label: `issuer:account`, `account`, or empty, percent-decoded.
    ///
    /// The separator is the first literal `:` or, when there is none, the first encoded one
    /// (`%3A`), as the Key URI format allows; an encoded colon after a literal one is part of a
    /// name (``encode(_:)`` writes names that way). Spaces around either part are dropped; an empty part is `nil`,
    /// so the rules that fill it in see no difference between `Issuer:` and `Issuer: `.
    package struct Label: Sendable {
        package var issuer: String?
        package var accountName: String?

        package init(_ percentEncodedPath: String, nameLength: Int = AuthenticatorURI.Limits.coffer.nameLength) throws(URIReadError) {
            var path = Substring(percentEncodedPath)
            if path.hasPrefix("/") { path = path.dropFirst() }
            let issuerPart: Substring?, accountPart: Substring
            if let colon = path.firstIndex(of: ":") {
                (issuerPart, accountPart) = (path[..<colon], path[path.index(after: colon)...])
            } else if let encoded = path.range(of: "%3A", options: .caseInsensitive) {
                (issuerPart, accountPart) = (path[..<encoded.lowerBound], path[encoded.upperBound...])
            } else {
                (issuerPart, accountPart) = (nil, path)
            }
            accountName = try Self.decode(accountPart, nameLength: nameLength)
            issuer = try issuerPart.flatMap { part throws(URIReadError) in try Self.decode(part, nameLength: nameLength) }
        }

        /// The percent-decoded, trimmed, checked part, or `nil` when it is empty.
        private static func decode(_ part: Substring, nameLength: Int) throws(URIReadError) -> String? {
            guard let decoded = String(part).removingPercentEncoding else {
                throw .invalidParameter(name: "label", reason: "it is not valid percent-encoding")
            }
            let name = decoded.trimmingCharacters(in: .whitespaces)
            try AuthenticatorURI.checkName(name, parameter: "label", limit: nameLength)
            return name.isEmpty ? nil : name
        }

        /// `name` with everything but unreserved characters (RFC 3986) percent-encoded.
        package static func encode(_ name: String) -> String {
            name.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
        }

        private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
    }
}
