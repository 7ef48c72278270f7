import Foundation

/// The schemes of authenticator enrolment URIs.
public enum UriScheme: String, CaseIterable, Sendable {
    /// `otpauth://`: an OATH credential.
    case otpauth = "otpauth://"
    /// `pushauth://`: a push credential.
    case pushauth = "pushauth://"
    /// `mfauth://`: both, from one URI.
    case mfauth = "mfauth://"

    /// The scheme without `://`.
    public var scheme: String { String(rawValue.dropLast(3)) }

    /// The scheme `urlString` starts with, compared without case.
    public static func from(urlString: String) -> UriScheme? {
        allCases.first { $0.matches(urlString: urlString) }
    }

    /// The scheme of `url`, compared without case.
    public static func from(url: URL) -> UriScheme? {
        allCases.first { $0.matches(url: url) }
    }

    /// Whether `urlString` starts with this scheme, compared without case.
    public func matches(urlString: String) -> Bool {
        urlString.lowercased().hasPrefix(rawValue)
    }

    /// Whether `url` has this scheme, compared without case.
    public func matches(url: URL) -> Bool {
        url.scheme?.lowercased() == scheme
    }
}
