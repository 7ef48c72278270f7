import Foundation

extension AuthenticatorURI {
    /// Query parameters by lower-cased name, percent-decoded; duplicates and oversized values
    /// are refused. An empty parameter (`issuer=`) says nothing: it reads as absent, so it never
    /// overrides what the label says and takes the default where there is one.
    package struct Parameters: Sendable {
        private var values: [String: String] = [:]

        package init(_ items: [URLQueryItem], valueLength: Int = AuthenticatorURI.Limits.coffer.valueLength) throws(URIReadError) {
            for item in items {
                let name = item.name.lowercased()
                guard values[name] == nil else { throw .invalidParameter(name: name, reason: "it appears more than once") }
                let value = item.value ?? ""
                guard value.count <= valueLength else {
                    throw .invalidParameter(name: name, reason: "it is longer than \(valueLength) characters")
                }
                values[name] = value
            }
        }

        /// The value, or `nil` when the parameter is absent or empty.
        package subscript(name: String) -> String? {
            values[name].flatMap { $0.isEmpty ? nil : $0 }
        }

        /// An identifier the server may send base64-encoded (`uid`, `oid`, `pid`): decoded when
        /// it is base64 (either alphabet, padding optional) of UTF-8 text without control
        /// characters, kept as given otherwise, as the ForgeRock SDKs do.
        package func identifier(_ name: String) throws(URIReadError) -> String? {
            guard let raw = self[name] else { return nil }
            let value = Base64Text.decodeText(raw) ?? raw
            guard !value.unicodeScalars.contains(where: AuthenticatorURI.isControl) else {
                throw .invalidParameter(name: name, reason: "it contains control characters")
            }
            return value
        }
    }
}
