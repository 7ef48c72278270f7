import CofferAuthenticator
import CofferStorage
import Foundation

/// The version of Coffer this app was built with.
public func cofferVersion() -> String { CofferVersion.current }

/// RFC 4226's first HOTP code (counter 0 of the secret "12345678901234567890").
public func firstRFC4226Code() throws -> String {
    try OathGenerator.hotp(secret: Data("12345678901234567890".utf8), counter: 0)
}
