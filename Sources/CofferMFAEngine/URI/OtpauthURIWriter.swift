import Foundation

extension AuthenticatorURI {
    /// The one writer of `otpauth://` URIs: `otpauth://TYPE/Issuer:account?secret=…&issuer=…`
    /// and the optional parameters, each name percent-encoded down to unreserved characters so a
    /// `:` inside the issuer or the account name can never be taken for the separator. The
    /// legacy generation's `MechanismURI` and the transfer module's accounts write through it.
    package static func otpauth(
        type: String, issuer: String, accountName: String, secret: String, algorithm: String? = nil,
        digits: Int? = nil, period: Int? = nil, counter: UInt64? = nil, uid: String? = nil, resourceId: String? = nil
    ) -> String {
        var components = URLComponents()
        components.scheme = "otpauth"
        components.host = type
        components.percentEncodedPath = "/" + Label.encode(issuer) + ":" + Label.encode(accountName)
        components.queryItems = [URLQueryItem(name: "secret", value: secret), URLQueryItem(name: "issuer", value: issuer)]
            + [algorithm.map { URLQueryItem(name: "algorithm", value: $0) },
               digits.map { URLQueryItem(name: "digits", value: String($0)) },
               period.map { URLQueryItem(name: "period", value: String($0)) },
               counter.map { URLQueryItem(name: "counter", value: String($0)) },
               uid.map { URLQueryItem(name: "uid", value: Base64Text.encodeURLSafe($0)) },
               resourceId.map { URLQueryItem(name: "oid", value: Base64Text.encodeURLSafe($0)) }].compactMap { $0 }
        return components.string ?? ""
    }
}
